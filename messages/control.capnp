@0xa6f653b7dd730a8f;
# Control plane: membership, liveness, stats, the inspector and checkpoints.
#
# Who sends what to whom:
#   node -> supervisor      Hello, then Join (answering the supervisor's Challenge)
#   supervisor -> node      Challenge, JoinReply, PeerDown, Stop
#   node <-> supervisor     Heartbeat, both ways, every cluster.heartbeat_ms
#   role actor -> supervisor Register (the CAF sender is the actor registered)
#   any actor -> inspector  Stats (periodic)
#   client <-> inspector    InspectorQuery / InspectorReply
#   supervisor <-> shards   CheckpointControl / CheckpointAck
# Any request may be answered by ErrorReply instead of its normal reply.

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("actorrec::wire");

enum Role {
  sampler @0;
  oracle @1;
  embedding @2;
  trainer @3;
  supervisor @4;
  inspector @5;
  cachePartition @6;
  syncScheduler @7;
}

# ---------------------------------------------------------------- membership

struct Hello {
  member @0 :Text;          # the topology name of the joining process
  build @1 :Text;           # BuildVersion() of the joining binary
  configDigest @2 :Text;    # Config::digest of its config file
}

struct Challenge {
  nonce @0 :Data;           # 16 random bytes, valid for one Join
}

struct Join {
  member @0 :Text;
  proof @1 :Data;           # HMAC-SHA256(secret, nonce ++ member)
  build @2 :Text;
  configDigest @3 :Text;
  pid @4 :UInt32;           # process id on its host, for logs
  hostName @5 :Text;        # gethostname() of the joining process, for logs
  gemmKernels @6 :Text;     # its trainers' GEMM library and ISA (Backend::name()): what decides their bits
}

struct JoinReply {
  union {
    admitted @0 :Admitted;
    refused @1 :Refused;
  }

  struct Admitted {
    coordinator @0 :Text;   # the member hosting the supervisor
    members @1 :UInt32;     # how many members the topology names
  }

  struct Refused {
    reason @0 :Reason;
    message @1 :Text;       # for the refused node's log: what to fix

    enum Reason {
      wrongSecret @0;       # proof does not match cluster.secret
      unknownMember @1;     # the name is not in the supervisor's topology
      duplicateMember @2;   # a live process already joined under this name
      configMismatch @3;    # configDigest differs from the supervisor's
      buildMismatch @4;     # build differs from the supervisor's
      noChallenge @5;       # Join without a preceding Hello from this name
      runEnding @6;         # the coordinator is ending its run: a restarted member retries (exit code 3)
    }
  }
}

struct Register {
  member @0 :Text;          # the member hosting the actor
  role @1 :Role;
  index @2 :UInt32;         # trainer rank, shard id, partition id; 0 otherwise
  name @3 :Text;            # e.g. "trainer[1]", unique within the cluster
}

struct Heartbeat {
  member @0 :Text;          # the sender's member name ("" never)
  seq @1 :UInt64;           # increases by one per heartbeat of this sender
  sentUnixNanos @2 :Int64;  # sender's clock, for round-trip estimates only
  actors @3 :UInt32;        # actors the sender hosts, alive
}

struct PeerDown {
  member @0 :Text;          # the member that was lost
  reason @1 :Text;          # e.g. "connection lost", "no heartbeat for 3000 ms"
  lastBatch @2 :Int64;      # last batch completed by the whole cluster, -1 before the first
}

struct Stop {
  reason @0 :Reason;
  message @1 :Text;

  enum Reason {
    finished @0;            # the run completed
    interrupted @1;         # a signal asked for a stop
    peerLost @2;            # a member died; see message
    failed @3;              # an unrecoverable error; see message
  }
}

# ---------------------------------------------------------------- stats and inspection

struct Stat {
  name @0 :Text;            # dotted, e.g. "cache.occupancy"
  value @1 :Float64;
  unit @2 :Text;            # "rows", "bytes", "samples/s", "" for counts
}

struct Stats {
  actor @0 :Text;           # the reporting actor's registered name
  role @1 :Role;
  batch @2 :Int64;          # the batch the figures refer to, -1 if none
  stats @3 :List(Stat);
}

struct ActorInfo {
  name @0 :Text;
  role @1 :Role;
  member @2 :Text;
  mailbox @3 :UInt64;       # messages waiting, when known
  alive @4 :Bool;
}

struct InspectorQuery {
  union {
    listActors @0 :Void;    # every registered actor
    actorStats @1 :Text;    # latest Stats of the named actor
    plan @2 :PlanRef;       # the oracle's plan for (batch, trainer)
  }

  struct PlanRef {
    batch @0 :Int64;
    trainer @1 :UInt32;
  }
}

struct InspectorReply {
  union {
    actors @0 :List(ActorInfo);
    stats @1 :Stats;
    planJson @2 :Text;      # the plan in the `oracle dump` JSON form
  }
}

# ---------------------------------------------------------------- checkpoints

struct CheckpointControl {
  checkpointId @0 :UInt64;
  batch @1 :Int64;          # the state after this batch is saved
  directory @2 :Text;       # where each participant writes its part
  union {
    begin @3 :Void;         # write your part (to a temporary name) and ack
    commit @4 :Void;        # every part is acked: rename into place
    abort @5 :Void;         # drop the temporary parts
  }
}

struct CheckpointAck {
  checkpointId @0 :UInt64;
  actor @1 :Text;
  ok @2 :Bool;
  bytes @3 :UInt64;         # size of the part written
  digest @4 :Text;          # XXH3 of the part
  message @5 :Text;         # why not ok
}

# ---------------------------------------------------------------- errors

struct ErrorReply {
  kind @0 :Kind;
  message @1 :Text;         # names the actor, batch and row where it applies

  # How the receiver should react (not what went wrong).
  enum Kind {
    failed @0;              # the request cannot succeed as sent; do not retry
    overloaded @1;          # retry later
    disconnected @2;        # a peer is gone; recovery will resend
    unimplemented @3;       # this build does not handle the request
  }
}
