// fork/exec children with captured output and guaranteed cleanup.
#include "tests/cluster/child_process.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace actorrec::testing {

ChildProcess::ChildProcess(const std::vector<std::string>& argv, std::string log_path)
    : log_path_(std::move(log_path)) {
  const pid_t parent = getpid();
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // the parent died before prctl
    int fd = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) _exit(127);
    // Run in the log's folder (the test's temp dir): whatever the child
    // writes relative to its working directory (runs/<name>/…) goes there.
    const std::string dir = log_path_.substr(0, log_path_.find_last_of('/') + 1);
    if (!dir.empty() && chdir(dir.c_str()) != 0) _exit(127);
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    close(fd);
    int null = open("/dev/null", O_RDONLY);
    dup2(null, STDIN_FILENO);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
}

ChildProcess::~ChildProcess() {
  if (running()) {
    kill(pid_, SIGKILL);
    WaitExit(std::chrono::seconds(10));
  }
}

void ChildProcess::Signal(int sig) {
  if (running()) kill(pid_, sig);
}

std::optional<int> ChildProcess::WaitExit(std::chrono::milliseconds timeout) {
  if (exit_code_) return exit_code_;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      return exit_code_;
    }
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

bool ChildProcess::WaitForLog(const std::string& needle, std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (Log().find(needle) != std::string::npos) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::string ChildProcess::Log() const {
  std::ifstream in(log_path_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string ChildProcess::Stacks() const {
  if (!running()) return "(the process has exited)";
  // Appends only: GCC 12 warns (-Wrestrict, a false positive) on "…" + std::to_string(…).
  std::string command = "gdb -batch -nx -ex 'thread apply all bt 30' -p ";
  command.append(std::to_string(pid_)).append(" 2>&1 | grep -E '^(Thread|#)'");
  std::string out;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    char buffer[4096];
    while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
    pclose(pipe);
  }
  return out.empty() ? "(no stacks: is gdb installed and may it attach?)" : out;
}

std::string DigestIn(const std::string& metrics) {
  const std::string key = "\"parameter_digest\":\"";
  const size_t at = metrics.rfind(key);
  if (at == std::string::npos) return "";
  const size_t begin = at + key.size();
  return metrics.substr(begin, metrics.find('"', begin) - begin);
}

std::vector<std::string> EvalsIn(const std::string& metrics) {
  std::vector<std::string> evals;
  std::istringstream lines(metrics);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("\"event\":\"eval\"") != std::string::npos) evals.push_back(line);
  }
  return evals;
}

uint16_t FreePort() {
  // The kernel may hand the same port to two binds in a row once the first
  // socket is closed (seen: two members of one topology got one port, and
  // the config check refused it), so a port is never given out twice by one
  // test process.
  static std::mutex mutex;
  static std::set<uint16_t> given;
  const std::lock_guard<std::mutex> lock(mutex);
  for (int attempt = 0; attempt < 1000; ++attempt) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      if (fd >= 0) close(fd);
      throw std::runtime_error("cannot find a free port on 127.0.0.1");
    }
    close(fd);
    if (given.insert(ntohs(addr.sin_port)).second) return ntohs(addr.sin_port);
  }
  throw std::runtime_error("cannot find a port on 127.0.0.1 not given out before");
}

std::string ActorrecBinary() {
  const char* bin = std::getenv("ACTORREC_BIN");
  if (bin == nullptr) throw std::runtime_error("ACTORREC_BIN is not set; run this test through meson test");
  return bin;
}

CliRun RunProgram(const TempDir& dir, const std::vector<std::string>& argv, const std::string& log,
                  std::chrono::milliseconds timeout) {
  ChildProcess p(argv, dir.File(log));
  const std::optional<int> code = p.WaitExit(timeout);
  return {code.value_or(-1), p.Log()};
}

CliRun Actorrec(const TempDir& dir, std::vector<std::string> args, const std::string& log,
                std::chrono::milliseconds timeout) {
  args.insert(args.begin(), ActorrecBinary());
  return RunProgram(dir, args, log, timeout);
}

}  // namespace actorrec::testing
