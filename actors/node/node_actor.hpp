// The node: one per process and member. It joins the supervisor (proving the
// cluster secret), registers or spawns the member's actors, heartbeats, and ends when the
// supervisor says Stop or is lost.
//
// Protocol: sends Hello, Join, Heartbeat to the supervisor; receives Stop and
// PeerDown frames; stop_atom ends it locally (a signal).
//
// State diagram: joining --admitted--> running --Stop / supervisor lost /
// stop_atom--> gone; joining --refused / no answer--> gone. Each way out sets
// the process Outcome: Stop(finished|interrupted) and stop_atom 0, refused
// kExitRefused, coordinator lost kExitPeerLost, Stop(peerLost) kExitPeerLost.
#pragma once

#include <caf/actor.hpp>

#include <functional>
#include <memory>
#include <string>

#include "actors/common/exit_codes.hpp"
#include "actors/node/actor_plan.hpp"
#include "configs/config.hpp"

namespace actorrec {

struct NodeArgs {
  config::Config config;
  std::string member;                // this node's name in config.cluster
  caf::actor supervisor;             // local, or the middleman's proxy of a remote one
  std::string supervisor_endpoint;   // "127.0.0.1:7701", for messages; empty when in this process
  std::shared_ptr<Outcome> outcome;
  // The actor that plays a planned role actor of this member, started and
  // stopped by the caller (the training pipeline of `actorrec train`); the
  // node registers it with the supervisor. Empty, or null for a role: the
  // node starts a shell in its place (role_shell.hpp).
  std::function<caf::actor(const PlannedActor&)> hosting;
  // Cluster members: the process's pipeline registers the member's actors
  // itself once the node is admitted (on_admitted); the node starts none.
  bool pipeline_registers = false;
  std::function<void()> on_admitted;  // called once, from the node's thread
  // The GEMM kernels this process's trainers use (gpu Backend::name()),
  // sent in the Join: the supervisor warns when trainer members differ.
  std::string gemm_kernels;
};

caf::actor SpawnNode(caf::actor_system& sys, NodeArgs args);

}  // namespace actorrec
