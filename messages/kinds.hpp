// Every message kind actors exchange, in one list: the CAF name of each
// Frame<S> and its registration come from here, so adding a kind is one line.
//
// Names are part of the wire format between processes: never rename one that
// a released build uses; add a new kind instead.
#pragma once

#include "messages/batch.capnp.h"
#include "messages/control.capnp.h"
#include "messages/plan.capnp.h"
#include "messages/rows.capnp.h"
#include "messages/sync.capnp.h"
#include "messages/wire.hpp"

// X(schema root type, CAF type name)
#define ACTORREC_CONTROL_MESSAGES(X)                       \
  X(::actorrec::wire::Hello, "actorrec.Hello")             \
  X(::actorrec::wire::Challenge, "actorrec.Challenge")     \
  X(::actorrec::wire::Join, "actorrec.Join")               \
  X(::actorrec::wire::JoinReply, "actorrec.JoinReply")     \
  X(::actorrec::wire::Register, "actorrec.Register")       \
  X(::actorrec::wire::Heartbeat, "actorrec.Heartbeat")     \
  X(::actorrec::wire::PeerDown, "actorrec.PeerDown")       \
  X(::actorrec::wire::Stop, "actorrec.Stop")               \
  X(::actorrec::wire::Stats, "actorrec.Stats")             \
  X(::actorrec::wire::InspectorQuery, "actorrec.InspectorQuery") \
  X(::actorrec::wire::InspectorReply, "actorrec.InspectorReply") \
  X(::actorrec::wire::CheckpointControl, "actorrec.CheckpointControl") \
  X(::actorrec::wire::CheckpointAck, "actorrec.CheckpointAck") \
  X(::actorrec::wire::ErrorReply, "actorrec.ErrorReply")

// Data-plane kinds: batches, plans, rows, sync.
#define ACTORREC_DATA_MESSAGES(X)                              \
  X(::actorrec::wire::Batch, "actorrec.Batch")                 \
  X(::actorrec::wire::TrainerPlan, "actorrec.TrainerPlan")     \
  X(::actorrec::wire::RowFetch, "actorrec.RowFetch")           \
  X(::actorrec::wire::Rows, "actorrec.Rows")                   \
  X(::actorrec::wire::WriteBack, "actorrec.WriteBack")         \
  X(::actorrec::wire::WriteBackAck, "actorrec.WriteBackAck")   \
  X(::actorrec::wire::SyncNotice, "actorrec.SyncNotice")

#define ACTORREC_ALL_MESSAGES(X) ACTORREC_CONTROL_MESSAGES(X) ACTORREC_DATA_MESSAGES(X)

namespace actorrec::wire {

#define ACTORREC_WIRE_NAME(S, NAME)              \
  template <>                                    \
  struct MessageName<S> {                        \
    static constexpr const char* value = NAME;   \
  };
ACTORREC_ALL_MESSAGES(ACTORREC_WIRE_NAME)
#undef ACTORREC_WIRE_NAME

}  // namespace actorrec::wire
