// Membership: admission by HMAC proof, liveness by heartbeat.
#include "actors/supervisor/membership.hpp"

#include "base/hmac.hpp"

namespace actorrec {

Membership::Membership(const config::ClusterConfig& cluster, std::string build,
                       std::string config_digest, Clock::time_point start)
    : secret_(cluster.secret),
      build_(std::move(build)),
      config_digest_(std::move(config_digest)),
      peer_timeout_(cluster.peer_timeout_ms),
      join_deadline_(start + std::chrono::milliseconds(cluster.join_timeout_ms)),
      spare_deadline_(start + std::chrono::milliseconds(cluster.join_timeout_ms / 2)),
      coordinator_(cluster.coordinator) {
  for (const auto& m : cluster.members) {
    if (m.roles.empty()) {  // a spare: never waited for
      has_spares_ = true;
      continue;
    }
    MemberStatus s;
    s.name = m.name;
    s.hosts_trainers = m.trainers > 0;
    members_.push_back(std::move(s));
  }
}

std::string Membership::Challenge(const std::string& member, std::string nonce) {
  // Hellos cost nothing to send, so a stranger could fill the table with
  // made-up names; past the bound, pending challenges are dropped (their
  // Joins are refused with kNoChallenge and can say Hello again).
  if (nonces_.size() >= kMaxPendingChallenges && !nonces_.count(member)) nonces_.clear();
  nonces_[member] = nonce;
  return nonce;
}

std::string Membership::Proof(const std::string& secret, const std::string& nonce,
                              const std::string& member) {
  return HmacSha256(secret, nonce + member);
}

Membership::Verdict Membership::Join(const JoinRequest& request, Clock::time_point now) {
  auto nonce = nonces_.find(request.member);
  if (nonce == nonces_.end()) {
    return {Refusal::kNoChallenge, "Join from '" + request.member + "' without a Hello first"};
  }
  // A nonce admits once, whatever the outcome.
  const std::string expected = Proof(secret_, nonce->second, request.member);
  nonces_.erase(nonce);
  if (!DigestEquals(expected, request.proof)) {
    return {Refusal::kWrongSecret,
            "the cluster secret of '" + request.member +
                "' does not match; give every member the same cluster.secret (or secret_file)"};
  }
  MemberStatus* status = Mutable(request.member);
  if (status == nullptr) {
    return {Refusal::kUnknownMember,
            "'" + request.member + "' is not a member of this topology; check cluster.member names"};
  }
  if (request.config_digest != config_digest_) {
    return {Refusal::kConfigMismatch, "'" + request.member + "' runs a config with digest " +
                                          request.config_digest + ", the coordinator " +
                                          config_digest_ + "; start every member with the same file"};
  }
  if (request.build != build_) {
    return {Refusal::kBuildMismatch, "'" + request.member + "' runs build " + request.build +
                                         ", the coordinator " + build_ +
                                         "; deploy the same actorrec build everywhere"};
  }
  if (status->state == State::kJoined) {
    return {Refusal::kDuplicateMember, "'" + request.member + "' has already joined (pid " +
                                           std::to_string(status->pid) + " on " +
                                           status->host_name + ")"};
  }
  if (status->state == State::kLost) {
    return {Refusal::kDuplicateMember,
            "'" + request.member + "' was lost earlier in this run (" + status->lost_reason +
                "); restart the run to bring it back"};
  }
  status->state = State::kJoined;
  status->last_heard = now;
  status->pid = request.pid;
  status->host_name = request.host_name;
  Verdict admitted{std::nullopt, "'" + request.member + "' joined (pid " + std::to_string(request.pid) + " on " +
                                     request.host_name + ")"};
  if (status->hosts_trainers && !request.gemm_kernels.empty()) {
    if (kernels_member_.empty()) {
      kernels_member_ = request.member;
      kernels_ = request.gemm_kernels;
    } else if (request.gemm_kernels != kernels_) {
      admitted.warning = "the trainers of '" + request.member + "' compute with " + request.gemm_kernels +
                         ", those of '" + kernels_member_ + "' with " + kernels_ +
                         ": the run stays consistent, but its parameters will not equal a one-process run "
                         "bit for bit; for that, give every member the same kernels (with oneDNN: "
                         "ONEDNN_MAX_CPU_ISA=AVX2, or the ISA all the machines have, in each member's environment)";
    }
  }
  return admitted;
}

bool Membership::Heartbeat(const std::string& member, uint64_t seq, Clock::time_point now) {
  MemberStatus* s = Mutable(member);
  if (s == nullptr || s->state != State::kJoined) return false;
  s->last_heard = now;
  s->last_seq = seq;
  ++s->heartbeats;
  return true;
}

bool Membership::MarkLost(const std::string& member, const std::string& reason) {
  MemberStatus* s = Mutable(member);
  if (s == nullptr || s->state != State::kJoined) return false;
  s->state = State::kLost;
  s->lost_reason = reason;
  return true;
}

std::vector<std::string> Membership::Silent(Clock::time_point now) const {
  std::vector<std::string> out;
  for (const auto& s : members_) {
    if (s.state == State::kJoined && now - s.last_heard > peer_timeout_) out.push_back(s.name);
  }
  return out;
}

std::vector<std::string> Membership::Overdue(Clock::time_point now) const {
  std::vector<std::string> out;
  if (now < join_deadline_) return out;
  for (const auto& s : members_) {
    if (s.state == State::kExpected) out.push_back(s.name);
  }
  return out;
}

std::optional<std::string> Membership::AwaitingSpare(Clock::time_point now) const {
  if (!has_spares_ || now < spare_deadline_) return std::nullopt;
  for (const auto& s : members_) {
    if (s.state == State::kExpected && s.spare.empty() && s.name != coordinator_) return s.name;
  }
  return std::nullopt;
}

void Membership::AssignSpare(const std::string& member, const std::string& spare) {
  if (MemberStatus* s = Mutable(member)) s->spare = spare;
}

bool Membership::AllJoined() const {
  for (const auto& s : members_) {
    if (s.state != State::kJoined) return false;
  }
  return true;
}

const Membership::MemberStatus* Membership::Find(const std::string& member) const {
  for (const auto& s : members_) {
    if (s.name == member) return &s;
  }
  return nullptr;
}

Membership::MemberStatus* Membership::Mutable(const std::string& member) {
  return const_cast<MemberStatus*>(Find(member));
}

const char* RefusalName(Membership::Refusal r) {
  switch (r) {
    case Membership::Refusal::kWrongSecret: return "wrong secret";
    case Membership::Refusal::kUnknownMember: return "unknown member";
    case Membership::Refusal::kDuplicateMember: return "duplicate member";
    case Membership::Refusal::kConfigMismatch: return "config mismatch";
    case Membership::Refusal::kBuildMismatch: return "build mismatch";
    case Membership::Refusal::kNoChallenge: return "no challenge";
    case Membership::Refusal::kRunEnding: return "run ending";
  }
  return "unknown";
}

}  // namespace actorrec
