@0xc7c2722d3721702f;
# Data plane, batches: the samples of one global batch, or of one trainer's
# slice of it, with dense features, labels and sparse features.
#
# Who sends what to whom:
#   batch_sampler -> oracle   Batch, the whole global batch (trainer = wholeBatch),
#                             in epoch order, one per global batch
#   oracle -> trainer[w]      Batch, trainer w's slice, alongside the TrainerPlan
#                             of the same batch (plan.capnp)
#
# Sample i of a message is sample sliceBegin + i of the global batch, and
# sample firstSample + i of the epoch's order. Every per-sample list below has
# exactly `samples` entries (or samples + 1 for offsets).

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("actorrec::wire");

const wholeBatch :UInt32 = 0xffffffff;
# The `trainer` of a message that holds a whole global batch, not a slice.

# ---------------------------------------------------------------- batch

struct Batch {
  epoch @0 :UInt32;
  index @1 :UInt64;          # global batch number b in the epoch's order
  firstSample @2 :UInt64;    # epoch position of this message's sample 0: b × B + sliceBegin
  samples @3 :UInt32;        # samples in this message: sliceEnd − sliceBegin

  trainer @4 :UInt32;        # the trainer this slice is for, or wholeBatch
  sliceBegin @5 :UInt32;     # first sample of the slice, counted within the global batch
  sliceEnd @6 :UInt32;       # one past the last; [0, B) for a whole batch

  numDense @7 :UInt32;       # dense features per sample
  dense @8 :List(Float32);
  # Row-major [samples × numDense]: feature j of sample i is dense[i × numDense + j].

  labels @9 :List(Float32);  # one per sample (click = 1, no click = 0 for CTR data)

  sparse :union {
    # The sparse features, in one of two equivalent forms. The sampler sends
    # the IKJT when in-batch dedup pays (sessions repeat user features); an
    # IKJT expands to the KJT of the same batch (see InverseKeyedJagged).
    kjt @10 :List(KeyedJagged);          # one entry per table, in table order
    ikjt @11 :List(InverseKeyedJagged);  # one entry per feature group; every table in exactly one group
  }
}

# ---------------------------------------------------------------- sparse features

struct KeyedJagged {
  # The bags of one table: sample i looks up rows
  # values[offsets[i]], …, values[offsets[i+1] − 1] of `table` (a multi-hot
  # bag; empty when offsets[i] = offsets[i+1]).
  table @0 :UInt32;
  values @1 :List(UInt64);   # row ids in [0, rows of table), bag after bag, in sample order
  offsets @2 :List(UInt32);  # samples + 1 entries: 0 = offsets[0] ≤ … ≤ offsets[samples] = values.size;
                             # empty when every bag holds exactly one id (single-hot: offsets[i] = i),
                             # which then needs values.size = samples (a third of a single-hot table's bytes)
}

struct InverseKeyedJagged {
  # RecD's inverse KJT for one feature group: tables whose features change
  # together (e.g. the user features of a session), deduplicated together.
  # The group has U unique bag tuples; tuple u holds one bag per table of the
  # group. Sample i uses tuple inverse[i]: its bag of tables[k] is
  #   unique[k].values[unique[k].offsets[u] .. unique[k].offsets[u+1]), u = inverse[i].
  # Expanding to a KJT is therefore a jagged index-select with `inverse` on
  # every table of the group: KJT offsets are the prefix sums of the selected
  # bag lengths, KJT values the selected bags concatenated in sample order.
  # Dedup keys on whole tuples: two samples share a tuple only when all the
  # group's bags are equal, so tuples need not be unique per table.
  tables @0 :List(UInt32);     # the group's tables, ascending
  unique @1 :List(UniqueBags); # one per entry of `tables`, same order; all with U + 1 offsets
  inverse @2 :List(UInt32);    # one per sample, each in [0, U)

  struct UniqueBags {
    values @0 :List(UInt64);   # row ids of the U unique bags, bag after bag
    offsets @1 :List(UInt32);  # U + 1 entries: bag u is values[offsets[u] .. offsets[u+1]); empty when single-hot
  }
}
