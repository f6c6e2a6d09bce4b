@0xf822ea56bc79937d;
# Data plane, sync: progress of one trainer's collectives for one batch.
#
# Who sends what to whom:
#   sync_scheduler[w] -> trainer[w]   SyncNotice finished: dense or critical sync
#                                     of the batch is done, the next batch may start
#   sync_scheduler[w] -> oracle       SyncNotice finished for delayed sync: its rows
#                                     may be written back (durability for replay)
#   sync_scheduler[w] -> inspector    SyncNotice started / finished, for timelines
#   trainer[w] -> sync_scheduler[w]   SyncNotice started: gradients of the batch are
#                                     ready, the scheduler may begin (or queue) the sync

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("actorrec::wire");

struct SyncNotice {
  batch @0 :Int64;           # the batch whose updates are synced
  kind @1 :Kind;
  trainer @2 :UInt32;        # the trainer whose scheduler runs the sync
  rows @3 :UInt32;           # embedding rows in the sync; 0 for dense
  bytes @4 :UInt64;          # payload this trainer contributes to the collective
  phase @5 :Phase;

  enum Kind {
    dense @0;                # all-reduce of the dense gradients
    critical @1;             # shared rows updated in the batch that the next batch reads
    delayed @2;              # other shared rows updated in the batch, synced in the background
  }

  enum Phase {
    started @0;
    finished @1;
  }
}
