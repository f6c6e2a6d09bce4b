// A fixed-window limit on log lines, counting what it holds back.
#include "base/log_rate_limit.hpp"

#include <spdlog/spdlog.h>

namespace actorrec {

void LogRateLimit::Roll(Clock::time_point now) {
  if (now - window_start_ >= window_) {
    window_start_ = now;
    in_window_ = 0;
  }
}

bool LogRateLimit::Allow(Clock::time_point now, uint64_t* held_back) {
  std::lock_guard<std::mutex> lock(mu_);
  Roll(now);
  if (in_window_ >= burst_) {
    ++held_back_;
    return false;
  }
  ++in_window_;
  *held_back = held_back_;
  held_back_ = 0;
  return true;
}

uint64_t LogRateLimit::Flush(Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);
  if (held_back_ == 0 || now - window_start_ < window_) return 0;
  const uint64_t n = held_back_;
  held_back_ = 0;
  return n;
}

void LogRateLimit::Warn(const std::string& line, const char* what) {
  uint64_t held_back = 0;
  if (!Allow(Clock::now(), &held_back)) return;
  WarnCount(held_back, what);
  spdlog::warn("{}", line);
}

void LogRateLimit::WarnHeldBack(const char* what) { WarnCount(Flush(Clock::now()), what); }

void LogRateLimit::WarnCount(uint64_t held_back, const char* what) const {
  if (held_back == 0) return;
  spdlog::warn("{} more {} not logged (at most {} lines per {} s)", held_back, what, burst_,
               std::chrono::duration_cast<std::chrono::seconds>(window_).count());
}

}  // namespace actorrec
