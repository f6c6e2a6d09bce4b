// Process exit codes of `actorrec`, documented in `actorrec --help`.
#pragma once

#include <atomic>

namespace actorrec {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;      // an error; the log says which
inline constexpr int kExitUsage = 2;        // bad command line or config
inline constexpr int kExitPeerLost = 3;     // a member of the cluster died
inline constexpr int kExitRefused = 4;      // the coordinator refused to admit us
inline constexpr int kExitJoinTimeout = 5;  // members missing after cluster.join_timeout_ms
inline constexpr int kExitNotBuilt = 6;     // the subcommand is not built yet
inline constexpr int kExitDiverged = 7;     // training stopped at a non-finite loss (NaN or infinity)

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

 private:
  std::atomic<int> code_{-1};
};

}  // namespace actorrec
