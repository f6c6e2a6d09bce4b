// The supervisor's view of the cluster: which members the topology expects,
// which have proven the secret and joined, and which are still alive.
//
// Plain C++ with no CAF: the supervisor actor feeds it events (hello, join,
// heartbeat, connection lost, clock) and acts on what it returns. Time is
// passed in, never read, so tests drive the clock.
//
// Invariants:
//  (1) a member is admitted only with a proof made from a nonce this object
//      issued to that member name, and each nonce admits at most once;
//  (2) at most one live process holds a member name;
//  (3) a member once lost stays lost (rejoining is recovery, a later issue).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "configs/config.hpp"

namespace actorrec {

class Membership {
 public:
  using Clock = std::chrono::steady_clock;

  // Outstanding challenges kept at most; far above any real cluster's size.
  static constexpr size_t kMaxPendingChallenges = 4096;

  enum class Refusal {
    kWrongSecret,
    kUnknownMember,
    kDuplicateMember,
    kConfigMismatch,
    kBuildMismatch,
    kNoChallenge,
    kRunEnding,  // the coordinator is ending its run (a restarted member came early: it should retry)
  };

  struct JoinRequest {
    std::string member;
    std::string proof;          // HMAC-SHA256(secret, nonce ++ member)
    std::string build;
    std::string config_digest;
    uint32_t pid = 0;
    std::string host_name;
    std::string gemm_kernels = {};  // its trainers' GEMM kernels; empty: not said
  };

  struct Verdict {
    std::optional<Refusal> refusal;  // empty: admitted
    std::string message;             // for logs on both sides: what to fix
    // Admitted, but its trainers' GEMM kernels differ from those of the
    // first trainer member to join: the run stays consistent (every trainer
    // applies the same sums) but will not equal a one-process run bit for
    // bit. What to do about it; empty when nothing is wrong.
    std::string warning = {};
    bool admitted() const { return !refusal; }
  };

  enum class State { kExpected, kJoined, kLost };

  struct MemberStatus {
    std::string name;
    State state = State::kExpected;
    Clock::time_point last_heard{};
    uint64_t last_seq = 0;
    uint64_t heartbeats = 0;
    uint32_t pid = 0;
    std::string host_name;
    std::string lost_reason;
    bool hosts_trainers = false;  // from the topology
    std::string spare;            // the spare its roles were given to, if any
  };

  // `cluster` supplies the expected members, the secret and the timeouts;
  // `build` and `config_digest` are this process's, which joiners must match.
  Membership(const config::ClusterConfig& cluster, std::string build, std::string config_digest,
             Clock::time_point start);

  // Issues a nonce for `member`. Unknown names get one too, so that a
  // prober learns nothing before proving the secret; they are refused at Join.
  std::string Challenge(const std::string& member, std::string nonce);

  // The proof a joiner must present for `nonce` (both sides use this).
  static std::string Proof(const std::string& secret, const std::string& nonce,
                           const std::string& member);

  // Checks the proof, the name, the build and the config; admits or refuses.
  Verdict Join(const JoinRequest& request, Clock::time_point now);

  // A heartbeat from a joined member. Returns false for a member that is not
  // joined (the caller ignores it and logs once).
  bool Heartbeat(const std::string& member, uint64_t seq, Clock::time_point now);

  // The member's process is gone (connection closed, actor down).
  // Returns true when this is news (it was joined before).
  bool MarkLost(const std::string& member, const std::string& reason);

  // Joined members not heard from for longer than the peer timeout.
  std::vector<std::string> Silent(Clock::time_point now) const;

  // Expected members that have not joined although the join timeout passed.
  std::vector<std::string> Overdue(Clock::time_point now) const;

  // A member lost for good: not joined although half of
  // cluster.join_timeout_ms passed since this run's start, and given to no
  // spare yet (never the coordinator, whose supervisor this is). The first
  // in topology order; nullopt when none, or when the topology names no
  // spare. Spares themselves (members without roles) are never expected.
  std::optional<std::string> AwaitingSpare(Clock::time_point now) const;
  // Gives `member`'s roles to `spare`, which joins under the member's name;
  // the member then waits for it as for itself (the join timeout holds).
  void AssignSpare(const std::string& member, const std::string& spare);

  bool AllJoined() const;
  const MemberStatus* Find(const std::string& member) const;
  const std::vector<MemberStatus>& members() const { return members_; }

 private:
  MemberStatus* Mutable(const std::string& member);

  std::string secret_;
  std::string build_;
  std::string config_digest_;
  std::chrono::milliseconds peer_timeout_;
  Clock::time_point join_deadline_;
  Clock::time_point spare_deadline_;
  std::string coordinator_;
  bool has_spares_ = false;
  std::vector<MemberStatus> members_;      // in topology order
  std::map<std::string, std::string> nonces_;  // member -> outstanding nonce
  std::string kernels_member_, kernels_;  // the first trainer member to join, and its GEMM kernels
};

const char* RefusalName(Membership::Refusal r);

}  // namespace actorrec
