// The batch_sampler: streams global batches in epoch order to one consumer
// (the oracle) with credit-based backpressure, so memory stays bounded
// whatever the consumer's speed: it holds no batch beyond the one it is
// sending and sends only as many as it was granted.
//
// Protocol:
//   (credit_atom, uint32_t n)     consumer -> sampler: n more batches may be sent
//   Frame<Batch>                  sampler -> consumer: the next global batch
//   (end_atom, uint64_t sent)     sampler -> consumer: no more batches
//   (end_atom, uint64_t sent, std::string error)   the source failed; the error
//                                 names the file and line or chunk
//   Frame<Stats>                  sampler -> stats sink (optional), every second
//   stop_atom                     ends the sampler
// Restart: spawn a new sampler with options.start = the first batch not yet
// acknowledged; its output from there is identical (BatchSequence).
#pragma once

#include <caf/actor.hpp>

#include <vector>

#include "actors/sampler/batch_sequence.hpp"

namespace actorrec {

struct SamplerArgs {
  BatchSequence::SourceFactory source;
  BatchSequence::Options options;
  caf::actor consumer;
  caf::actor stats_sink;  // may be null
  // Tables deduplicated together when sending batches as IKJT; empty: send KJT.
  std::vector<std::vector<uint32_t>> dedup_groups;
};

caf::actor SpawnSampler(caf::actor_system& sys, SamplerArgs args);

}  // namespace actorrec
