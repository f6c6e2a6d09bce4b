// Real child processes for multi-process tests: started with fork/exec, their
// stdout and stderr captured in a file, and always reaped. A child that
// outlives its ChildProcess is killed; a child whose test process dies is
// killed by the kernel (PR_SET_PDEATHSIG), so no test leaves processes behind.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/temp_dir.hpp"

namespace actorrec::testing {

class ChildProcess {
 public:
  // Runs argv[0] with argv, output to `log_path`.
  // Runs argv[0] (an absolute path) in the folder of log_path, output to log_path.
  ChildProcess(const std::vector<std::string>& argv, std::string log_path);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  void Signal(int sig);
  // The exit code (128 + signal when killed by one), or nothing on timeout.
  std::optional<int> WaitExit(std::chrono::milliseconds timeout);
  // Polls the log until it contains `needle`; true when it did in time.
  bool WaitForLog(const std::string& needle, std::chrono::milliseconds timeout) const;
  std::string Log() const;
  // Every thread's backtrace of the running child, through gdb (for a test's
  // failure message when a child hangs); says why when it cannot.
  std::string Stacks() const;
  bool running() const { return !exit_code_.has_value(); }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  std::string log_path_;
  std::optional<int> exit_code_;
};

// A TCP port on 127.0.0.1 that was free a moment ago (bind to 0, read it
// back), never the same one twice in one test process.
uint16_t FreePort();


// The parameter digest of the last summary in a metrics.jsonl's text (the
// "parameter_digest" field); empty when there is none.
std::string DigestIn(const std::string& metrics);

// The "eval" lines of a metrics.jsonl's text, in order.
std::vector<std::string> EvalsIn(const std::string& metrics);

// The actorrec binary under test, from $ACTORREC_BIN (set by meson).
std::string ActorrecBinary();

// `actorrec args…` run to its end in `dir` (its output in dir/log): the exit
// code (-1 when it outlived `timeout` and was killed) and the output.
struct CliRun {
  int code;
  std::string output;
};
// Any program, argv[0] an absolute path, run the same way.
CliRun RunProgram(const TempDir& dir, const std::vector<std::string>& argv, const std::string& log = "out.log",
                  std::chrono::milliseconds timeout = std::chrono::seconds(240));
CliRun Actorrec(const TempDir& dir, std::vector<std::string> args, const std::string& log = "out.log",
                std::chrono::milliseconds timeout = std::chrono::seconds(240));

}  // namespace actorrec::testing
