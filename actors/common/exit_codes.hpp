// Process exit codes of `actorrec`, documented in `actorrec --help`.
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.hpp"

namespace actorrec {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;      // an error; the log says which
inline constexpr int kExitUsage = 2;        // bad command line or config
inline constexpr int kExitPeerLost = 3;     // a member of the cluster died
inline constexpr int kExitRefused = 4;      // the coordinator refused to admit us
inline constexpr int kExitJoinTimeout = 5;  // members missing after cluster.join_timeout_ms
// 6 was "the subcommand is not built yet", until every subcommand was.
// Memory ran out (std::bad_alloc reached the command): a size in the config
// or the data needs more than the process could get. Config sizes that
// cannot fit the machine are refused before anything starts (exit 2); this
// is what is left, e.g. a limit (ulimit -v, a container) below the machine.
inline constexpr int kExitNoMemory = 7;
// Training stopped at a non-finite loss (NaN or infinity); no checkpoint of
// those parameters is written, the last good one is kept.
inline constexpr int kExitDiverged = 8;

// The exit code of a command that stops on `status`, the same in every
// subcommand: damaged bytes, the operating system or a peer failing are an
// error (1); anything the command line or config can fix (a mismatched
// checkpoint, a missing file, an unsupported setting) is 2.
inline int ExitCodeOf(const Status& status) {
  switch (status.code()) {
    case Status::Code::kOk:
      return kExitOk;
    case Status::Code::kCorruption:
    case Status::Code::kIoError:
    case Status::Code::kUnavailable:
      return kExitFailure;
    default:
      return kExitUsage;
  }
}

// The process's exit code, decided by whichever actor ends the run first.
class Outcome {
 public:
  // Keeps the first code set; later ones are consequences of the first.
  void Set(int code) {
    int unset = -1;
    code_.compare_exchange_strong(unset, code);
  }
  int code() const {
    int c = code_.load();
    return c < 0 ? kExitOk : c;
  }
  // A lost member, as the JSON line metrics.jsonl records for it (the
  // supervisor sets it; the first one is kept).
  void SetLoss(const std::string& json) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (loss_.empty()) loss_ = json;
  }
  std::string loss() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return loss_;
  }
  // Other events of the run, as the JSON lines metrics.jsonl records (a
  // spare's takeover), in the order they happened.
  void AddEvent(const std::string& json) {
    std::lock_guard<std::mutex> lock(mutex_);
    events_.push_back(json);
  }
  std::vector<std::string> events() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return events_;
  }

 private:
  std::atomic<int> code_{-1};
  mutable std::mutex mutex_;
  std::string loss_;
  std::vector<std::string> events_;
};

}  // namespace actorrec
