// Rate limiting for log lines that outsiders can trigger (refused
// connections): a flood must not fill the disk or drown the lines that
// matter, yet nothing may vanish without a count.
//
// At most `burst` lines pass per `window`; lines held back are counted, and
// the count is handed to the next line that passes (or to Flush once the
// window is over), so the log says how many were left out.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace actorrec {

class LogRateLimit {
 public:
  using Clock = std::chrono::steady_clock;

  LogRateLimit(uint32_t burst, Clock::duration window) : burst_(burst), window_(window) {}

  // True when a line may be logged at `now`; then *held_back is the number
  // of lines held back before it (and is reset). False: this line is counted.
  bool Allow(Clock::time_point now, uint64_t* held_back);

  // The lines held back in windows that are over (reset), for a periodic
  // "N more not logged" line; 0 while the window is still open.
  uint64_t Flush(Clock::time_point now);

  // Logs `line` as a warning when Allow lets it through, preceded by a line
  // counting those held back ("3 more <what> not logged (at most 20 lines
  // per 10 s)"); else counts it.
  void Warn(const std::string& line, const char* what);

  // Logs the count of lines held back in windows that are over, if any
  // (call it now and then, e.g. from a timer).
  void WarnHeldBack(const char* what);

 private:
  void WarnCount(uint64_t held_back, const char* what) const;

  void Roll(Clock::time_point now);

  const uint32_t burst_;
  const Clock::duration window_;
  std::mutex mu_;
  Clock::time_point window_start_{};
  uint32_t in_window_ = 0;
  uint64_t held_back_ = 0;
};

}  // namespace actorrec
