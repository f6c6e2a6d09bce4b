// The signals that stop a member process (SIGINT, SIGTERM, SIGHUP), taken
// synchronously: blocked in every thread and waited for with a timeout, so
// no handler runs on an actor thread. Shared by the member's runtime and
// its agent (agent.hpp), which forwards them to its worker.
#pragma once

#include <signal.h>

#include <chrono>
#include <ctime>

namespace actorrec {

inline sigset_t StopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  return set;
}

// Blocks the stop signals in the calling thread (and the threads it starts
// afterwards, which inherit the mask); returns their set.
inline sigset_t BlockStopSignals() {
  const sigset_t set = StopSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

// Waits up to `timeout` for one of `set`; returns it, or 0.
inline int WaitSignal(const sigset_t& set, std::chrono::milliseconds timeout) {
  timespec ts{static_cast<time_t>(timeout.count() / 1000), static_cast<long>((timeout.count() % 1000) * 1000000)};
  siginfo_t info;
  const int sig = sigtimedwait(&set, &info, &ts);
  return sig > 0 ? sig : 0;
}

}  // namespace actorrec
