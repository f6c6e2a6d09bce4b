@0xb0057ec140f4cc22;
# Data plane, plans: what one trainer does with its cache for one batch.
#
# Who sends what to whom:
#   oracle -> trainer[w]   TrainerPlan, one per batch per trainer, in batch order,
#                          with trainer w's Batch slice (batch.capnp) of the same batch
# The trainer hands the prefetch lists to its cache partitions (RowFetch,
# rows.capnp), the sync sets to its sync_scheduler, and the evictions it writes
# to its cache partitions (WriteBack).
#
# The oracle owns the logical state of every cache (ARCHITECTURE §3). Looking
# at batches b … b+L it gives each row a TTL: the last batch of the window that
# uses it. A row stays in its slot while batches up to its TTL run; using it
# again within the window raises the TTL; when batch b = TTL is planned and no
# batch of b+1 … b+L uses the row, it is evicted after b. Slots are indices
# into this trainer's cache arrays; a slot named here is free when its
# prefetch lands and stays the row's until its eviction. Shared rows have the
# same slot in every trainer's cache (the caches are logically replicated).

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("actorrec::wire");

# ---------------------------------------------------------------- plan

struct TrainerPlan {
  batch @0 :Int64;           # the global batch b this plan is for
  trainer @1 :UInt32;        # the trainer w that executes it
  lookahead @2 :UInt32;      # L: the oracle planned b with batches b … b+L in view (0: the modes without lookahead)

  barrier @3 :Int64;
  # b − L − 1, or −1 when that is negative (none). The prefetch of this plan
  # may be served only once every write-back of batches ≤ barrier is
  # acknowledged (WriteBackAck): a missed row was not used by b−L … b−1, so its
  # latest value is on the shard exactly then. This is the consistency rule.

  prefetch @4 :List(RowSlot);
  # Shared rows b uses that are not cached: every trainer fetches them (into
  # the same slot) before b runs.

  privatePrefetch @5 :List(RowSlot);
  # Rows only this trainer uses in b and nobody uses again within the window:
  # fetched by this trainer alone, before b runs; no other cache holds them.

  features @6 :List(TableFeatures);
  # This trainer's slice of b's sparse features, translated to slots: one
  # entry per table, in table order. Trainers gather and scatter by slot and
  # never hash a row id.

  # Sync sets: the rows b updates, by how their update reaches the other trainers.

  privateRows @7 :List(RowSlot);
  # Rows this trainer alone uses in b and nobody uses again within the
  # window: the privatePrefetch rows, and cached rows whose last use is this
  # trainer's in b. No sync; their TTL is b, so they are also listed in
  # `evictions` with this trainer as writer.

  critical @8 :List(RowSlot);
  # Shared rows updated in b that b+1 reads: summed over trainers in rank
  # order and applied before b+1 starts.

  delayed @9 :List(RowSlot);
  # Shared rows updated in b that b+1 does not read (read by b+2 … b+L, or
  # evicted after b): synced in the background while b+1 computes. Must finish
  # before the next critical sync begins (the one of b+1; background sync never
  # competes with it), and so before any later read of these rows and before
  # the write-back of the ones evicted after b.

  evictions @10 :List(Eviction);
  # Rows of this trainer's cache whose TTL is b: their slots are freed after b
  # (once their sync is done). `writer` names the one trainer, this one or
  # another, that writes the row back to its embedding shard; a shared row is
  # in every trainer's list with the same writer.

  occupancy @11 :UInt32;
  # Slots of this trainer's cache in use while b runs: after the prefetches
  # land, before the evictions free theirs. Never above the cache's capacity.

  bagGroups @12 :List(BagGroup);
  # The dedup groups (config dataset.dedup_groups; empty without): the
  # features of a group's tables hold the slice's distinct bag tuples, U of
  # them, instead of one bag per sample (RecD's IKJT).
}

# ---------------------------------------------------------------- parts

struct RowSlot {
  table @0 :UInt32;
  row @1 :UInt64;            # row id in the table
  slot @2 :UInt32;           # where the row lives in this trainer's cache
}

struct Eviction {
  table @0 :UInt32;
  row @1 :UInt64;
  slot @2 :UInt32;           # the slot freed after the batch
  writer @3 :UInt32;         # the one trainer that writes the row back; the others only free the slot
}

struct BagGroup {
  # Tables deduplicated together: the features of each hold U bags (the
  # slice's distinct tuples, in order of first use); sample i uses tuple
  # bagOf[i] of every one of them. The trainer pools each tuple once and
  # expands it to its samples; backward sums the samples' gradients per
  # tuple in ascending sample order first.
  tables @0 :List(UInt32);       # ascending, each with features in this plan, in no other group
  bagOf @1 :List(UInt32);        # one per sample of the slice, each in [0, U)
}

struct TableFeatures {
  # One table's features of the slice, deduplicated: the trainer gathers the
  # rows of uniqueSlots once (U rows), and sample i pools
  #   gathered[inverse[p]] for p in [offsets[i], offsets[i+1]).
  # Backward accumulates each position's gradient into gathered row
  # inverse[p], positions in sample order, then applies the optimizer to the
  # slots of uniqueSlots.
  table @0 :UInt32;
  uniqueSlots @1 :List(UInt32);  # the U distinct slots the slice reads
  inverse @2 :List(UInt32);      # one per value position of the slice's bags, each in [0, U)
  offsets @3 :List(UInt32);      # samples + 1 entries (U + 1 for a table of a bagGroup): bag boundaries into `inverse`
}
