@0xa66a3bf4015e76c8;
# Data plane, rows: embedding rows with their optimizer state, between a
# trainer's cache partitions and the embedding shards.
#
# Who sends what to whom:
#   cache_partition[w][p] -> embedding_shard[s]   RowFetch (the prefetch of a plan,
#                                                 the keys shard s holds)
#   embedding_shard[s] -> cache_partition[w][p]   Rows, answering one RowFetch
#   cache_partition[w][p] -> embedding_shard[s]   WriteBack (evicted rows this trainer writes)
#   embedding_shard[s] -> cache_partition[w][p]   WriteBackAck, once the rows are applied
#
# Every cache partition sends every shard exactly one WriteBack per batch, in
# batch order, empty when it evicts nothing there: a shard then knows that
# batch b's write-backs are all applied once it has b's from every trainer,
# and serves a RowFetch only when that holds for the fetch's barrier.
#
# Row payloads travel as Data, not List(Float32): a row is its embedding
# followed by its optimizer state, rows follow each other, so the receiver
# lands a whole message in its cache slots (or shard storage) with one memcpy
# per run of consecutive slots, straight from the message buffer. A
# List(Float32) would carry the same bytes, but Data says the block is opaque
# and contiguous, and keeps per-element accessors out of the copy. The bytes
# are float32, little-endian (every platform we build for), 8-byte aligned in
# the message. All rows of one message share dim and stateWidth; a model whose
# tables differ in either sends one message per (dim, stateWidth).

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("actorrec::wire");

struct RowKey {
  table @0 :UInt32;
  row @1 :UInt64;            # row id in the table
}

# ---------------------------------------------------------------- prefetch

struct RowFetch {
  requestId @0 :UInt64;      # chosen by the partition, unique among its open fetches; echoed by Rows
  batch @1 :Int64;           # the batch whose plan asked for these rows
  trainer @2 :UInt32;        # the trainer whose cache receives them
  partition @3 :UInt32;      # the cache partition of that trainer, to answer to
  keys @4 :List(RowKey);     # the rows wanted, each once
  barrier @5 :Int64;
  # The plan's barrier: the shard serves this fetch only once every trainer's
  # write-backs of batches <= barrier are applied (the consistency rule,
  # ARCHITECTURE §3); -1: serve at once.
}

struct Rows {
  requestId @0 :UInt64;      # the RowFetch answered
  batch @1 :Int64;           # copied from the RowFetch
  dim @2 :UInt32;            # embedding dim: floats of embedding per row
  stateWidth @3 :UInt32;     # floats of optimizer state per row (Adagrad: dim, Adam: 2 × dim, SGD: 0)
  keys @4 :List(RowKey);     # the RowFetch's keys, same order
  data @5 :Data;
  # float32 LE, row-major [keys.size × (dim + stateWidth)]: row i is
  # embedding i (dim floats) then its state (stateWidth floats).
}

# ---------------------------------------------------------------- write-back

struct WriteBack {
  batch @0 :Int64;           # the batch after which these rows were evicted
  trainer @1 :UInt32;        # the writer named by the plan's Eviction
  partition @2 :UInt32;      # the cache partition that held them
  dim @3 :UInt32;
  stateWidth @4 :UInt32;
  keys @5 :List(RowKey);     # rows of the receiving shard only, each once
  data @6 :Data;             # as in Rows: [keys.size × (dim + stateWidth)] float32 LE
}

struct WriteBackAck {
  batch @0 :Int64;           # the WriteBack's batch
  trainer @1 :UInt32;        # the WriteBack's trainer
  partition @2 :UInt32;      # the WriteBack's partition
  rows @3 :UInt32;           # rows applied: the WriteBack's keys.size
  shard @4 :UInt32;          # the shard that applied them; the rows are durable there from now on
}
