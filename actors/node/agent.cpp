// The per-host agent: a worker process per member, restarted when it dies.
#include "actors/node/agent.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "actors/common/exit_codes.hpp"
#include "actors/node/stop_signals.hpp"

namespace actorrec {

using Clock = std::chrono::steady_clock;

AgentDecision RestartPolicy::OnEnd(const WorkerEnd& end) {
  AgentDecision d;
  const std::string what = DescribeWorkerEnd(end);
  if (!end.stop_requested && !end.signaled && end.code == kExitTakeOver) {
    d.restart = true;
    d.why = "given the roles of a member lost for good";
    return d;
  }
  if (end.stop_requested || (!end.signaled && end.code != kExitPeerLost)) {
    d.exit_code = end.signaled ? 128 + end.code : end.code;
    d.why = what + (end.stop_requested ? " after the stop signal; the agent ends too" : "; not restarted");
    return d;
  }
  if (!end.signaled) {  // exit code 3: the cluster lost a member
    d.restart = true;
    d.delay = std::chrono::milliseconds(backoff_ms_);
    d.why = what + "; rejoining from the newest snapshot";
    return d;
  }
  ++crashes_;
  if (crashes_ > max_restarts_) {
    d.exit_code = 128 + end.code;
    d.why = what + "; crash " + std::to_string(crashes_) + " is more than cluster.max_restarts = " +
            std::to_string(max_restarts_) + ": giving up";
    return d;
  }
  const int shift = std::min(crashes_ - 1, 16);
  const int64_t delay = std::min<int64_t>(static_cast<int64_t>(backoff_ms_) << shift, 10000);
  d.restart = true;
  d.delay = std::chrono::milliseconds(std::max<int64_t>(delay, 0));
  d.why = what + "; restart " + std::to_string(crashes_) + " of " + std::to_string(max_restarts_);
  return d;
}

std::string DescribeWorkerEnd(const WorkerEnd& end) {
  if (end.signaled) return "killed by signal " + std::to_string(end.code) + " (" + strsignal(end.code) + ")";
  std::string s = "exited with code " + std::to_string(end.code);
  switch (end.code) {
    case kExitOk: return s + " (done)";
    case kExitPeerLost: return s + " (a cluster member was lost)";
    case kExitRefused: return s + " (refused by the coordinator)";
    case kExitJoinTimeout: return s + " (members missing after the join timeout)";
    case kExitTakeOver: return s + " (a spare taking over a member)";
    default: return s;
  }
}

namespace {

std::string SelfExe() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

// Forks and execs the worker; -1 when fork fails.
pid_t StartWorker(const std::string& exe, const std::vector<std::string>& args) {
  std::vector<std::string> argv_s = {exe};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t agent = getpid();
  const pid_t pid = fork();
  if (pid != 0) return pid;
  // The child: dies with the agent (checked again after the prctl, in case
  // the agent died in between), takes signals again, becomes the worker.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != agent) _exit(128 + SIGKILL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  execv(exe.c_str(), argv.data());
  _exit(127);
}

}  // namespace

std::string MakeMemoryStore(const std::string& member, std::string* error) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path root = "/dev/shm";
  if (!fs::is_directory(root, ec)) {
    *error = "/dev/shm (memory) is not a directory on this host";
    return "";
  }
  std::string safe = member;
  for (char& c : safe) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '_';
  }
  const std::string prefix = "actorrec-snapshots-" + safe + "-";
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    const std::string n = entry.path().filename().string();
    if (!n.starts_with(prefix)) continue;
    const std::string pid = n.substr(prefix.size());
    if (pid.empty() || pid.size() > 9 || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (::kill(static_cast<pid_t>(std::stol(pid)), 0) != 0 && errno == ESRCH) fs::remove_all(entry.path(), ec);
  }
  const fs::path dir = root / (prefix + std::to_string(::getpid()));
  fs::remove_all(dir, ec);
  fs::create_directories(dir, ec);
  if (ec) {
    *error = "cannot create " + dir.string() + ": " + ec.message();
    return "";
  }
  return dir.string();
}

namespace {

int RunWorkers(const AgentArgs& args);

}  // namespace

int RunAgent(const AgentArgs& args) {
  const int code = RunWorkers(args);
  std::error_code ec;
  if (!args.memory_store.empty()) std::filesystem::remove_all(args.memory_store, ec);
  if (!args.takeover_file.empty()) std::filesystem::remove(args.takeover_file, ec);
  return code;
}

namespace {

int RunWorkers(const AgentArgs& args) {
  const sigset_t stops = BlockStopSignals();
  const std::string exe = SelfExe();
  RestartPolicy policy(args.max_restarts, args.backoff_ms);
  bool stop_requested = false;
  int signals = 0;
  std::string taken_over;  // a spare's: the member it plays since its takeover
  for (int start = 1;; ++start) {
    std::vector<std::string> worker_args = args.worker_args;
    if (start > 1) worker_args.push_back("--recover");
    if (!taken_over.empty()) worker_args.insert(worker_args.end(), {"--take-over", taken_over});
    const pid_t pid = StartWorker(exe, worker_args);
    if (pid < 0) {
      spdlog::error("agent of member '{}': cannot start a worker: {}", args.member, strerror(errno));
      return kExitFailure;
    }
    const auto started = Clock::now();
    spdlog::info("agent of member '{}': worker pid {} started (start {})", args.member, pid, start);
    int status = 0;
    for (;;) {
      const pid_t r = waitpid(pid, &status, WNOHANG);
      if (r == pid) break;
      if (r < 0 && errno != EINTR) {
        spdlog::error("agent of member '{}': waiting for worker pid {}: {}", args.member, pid, strerror(errno));
        return kExitFailure;
      }
      if (const int sig = WaitSignal(stops, std::chrono::milliseconds(50)); sig > 0) {
        stop_requested = true;
        if (++signals == 1) {
          spdlog::warn("agent of member '{}': {} received; passing it to worker pid {}", args.member, strsignal(sig),
                       pid);
          kill(pid, sig);
        } else {
          spdlog::warn("agent of member '{}': {} received again; killing worker pid {}", args.member, strsignal(sig),
                       pid);
          kill(pid, SIGKILL);
        }
      }
    }
    WorkerEnd end;
    end.signaled = WIFSIGNALED(status);
    end.code = end.signaled ? WTERMSIG(status) : WEXITSTATUS(status);
    end.stop_requested = stop_requested;
    const auto lived = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count();
    AgentDecision d = policy.OnEnd(end);
    if (!d.restart) {
      if (end.signaled && !end.stop_requested) {
        spdlog::error("agent of member '{}': worker pid {} {} after {} ms{}", args.member, pid, d.why, lived,
                      args.snapshot_dir.empty() ? std::string()
                                                : "; the last good snapshot stays in " + args.snapshot_dir);
      } else {
        spdlog::info("agent of member '{}': worker pid {} {}", args.member, pid, d.why);
      }
      return d.exit_code;
    }
    if (!end.signaled && end.code == kExitTakeOver) {
      std::ifstream in(args.takeover_file);
      if (args.takeover_file.empty() || !std::getline(in, taken_over) || taken_over.empty()) {
        spdlog::error("agent of member '{}': worker pid {} took over a member without naming it in {}", args.member,
                      pid, args.takeover_file);
        return kExitFailure;
      }
      d.why += ": '" + taken_over + "'";
    }
    spdlog::warn("agent of member '{}': worker pid {} {} after {} ms; starting it again in {} ms", args.member, pid,
                 d.why, lived, d.delay.count());
    // The wait, still forwarding nothing (no worker runs): a stop signal now
    // ends the agent.
    const auto until = Clock::now() + d.delay;
    while (Clock::now() < until) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
      if (const int sig = WaitSignal(stops, std::chrono::milliseconds(std::clamp<int64_t>(left, 1, 50))); sig > 0) {
        spdlog::warn("agent of member '{}': {} received between workers; ending", args.member, strsignal(sig));
        return 128 + sig;
      }
    }
  }
}

}  // namespace

}  // namespace actorrec
