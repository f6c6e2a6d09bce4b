// The per-host agent of `actorrec node` with cluster.max_restarts > 0: it runs
// the member in a worker process (the same binary, `node … --worker`) and
// restarts it when it dies, so that the cluster recovers from a killed or
// crashed process without anyone restarting anything (docs/reliability.md).
//
// What each end of the worker leads to is RestartPolicy's decision (a plain
// class, unit-tested); RunAgent is the process shell around it. The agent
// forwards SIGINT, SIGTERM and SIGHUP to its worker and never restarts after
// one; a second signal kills the worker. The worker gets PR_SET_PDEATHSIG, so
// it dies with its agent and is never left an orphan.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace actorrec {

// Between a spare's worker and its agent only: the worker was given the
// roles of a member lost for good; the agent starts it again as that member.
inline constexpr int kExitTakeOver = 9;

// How a worker process ended.
struct WorkerEnd {
  bool signaled = false;  // killed by a signal (SIGKILL, SIGSEGV, SIGABRT…)
  int code = 0;           // the exit code, or the signal when `signaled`
  bool stop_requested = false;  // the agent forwarded a stop signal before it ended
};

struct AgentDecision {
  bool restart = false;
  std::chrono::milliseconds delay{0};  // before the restart
  int exit_code = 0;                   // without a restart: the agent's own exit code
  std::string why;                     // for the log: the cause, and what follows
};

// REQUIRES: max_restarts >= 0, backoff_ms >= 0.
class RestartPolicy {
 public:
  RestartPolicy(int max_restarts, int backoff_ms) : max_restarts_(max_restarts), backoff_ms_(backoff_ms) {}

  // A worker killed by a signal it was not asked to take is a crash: it is
  // restarted after backoff_ms·2^(crashes−1) (at most 10 s) until it has
  // crashed more than max_restarts times. One that exits with code 3 lost a
  // peer (the cluster then resumes from its snapshot): it rejoins after
  // backoff_ms, without counting as a crash. Any other end (done, a stop
  // signal, a config or data error, a refusal, a join timeout) ends the agent
  // with the worker's code (128 + N for signal N), but for a spare's worker
  // that exits with kExitTakeOver: restarted at once, as the member it takes
  // over.
  AgentDecision OnEnd(const WorkerEnd& end);

  int crashes() const { return crashes_; }

 private:
  int max_restarts_;
  int backoff_ms_;
  int crashes_ = 0;
};

// A description of a worker's end for the log: "exited with code 3 (a
// cluster member was lost)", "killed by signal 9 (Killed)".
std::string DescribeWorkerEnd(const WorkerEnd& end);

struct AgentArgs {
  std::string member;
  // The worker's command line after the program: the agent's own arguments
  // with --worker added; restarts add --recover.
  std::vector<std::string> worker_args;
  int max_restarts = 0;
  int backoff_ms = 0;
  std::string snapshot_dir;  // named when the agent gives up
  // Snapshots in memory: the store the agent keeps for its workers
  // (MakeMemoryStore), removed when the agent ends.
  std::string memory_store;
  // A spare's (config::ClusterConfig::spares): the file its worker writes
  // the name of the member it takes over into before it exits with
  // kExitTakeOver; the agent then starts every later worker with
  // `--take-over MEMBER`. Removed when the agent ends.
  std::string takeover_file;
};

// A new, empty directory in memory (tmpfs: /dev/shm) for the snapshots of
// `member`'s workers, named for the member and this agent's pid, so that it
// outlives every worker and goes with the agent; the stores of dead agents
// on this host are removed first. Empty, with *error saying why, when it
// cannot be made.
std::string MakeMemoryStore(const std::string& member, std::string* error);

// Runs the worker until the policy ends the agent; returns the exit code.
// The memory store, if any, is removed before it returns.
// Stop signals must not be blocked yet (the agent blocks them itself).
int RunAgent(const AgentArgs& args);

}  // namespace actorrec
