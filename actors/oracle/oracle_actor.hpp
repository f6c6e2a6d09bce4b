// The oracle's actor shell: pulls global batches from the batch_sampler,
// plans them with the Planner and sends each trainer its plan and its slice
// of the batch, as far ahead of training as the lookahead, the trainers'
// progress and the driver's hold allow.
//
//   (std::vector<caf::actor> trainers, caf::actor sampler)
//                                  driver -> oracle     who to plan for and pull from; starts the run
//   Frame<Batch>                   sampler -> oracle    the next global batch (one per credit)
//   (end_atom, sent[, error])      sampler -> oracle    end of the data (or its failure)
//   (settled_atom, trainer, b)     trainer -> oracle    b is settled there: plans may run further
//   (hold_atom, last)              driver -> oracle     plan no batch after `last` for now
//   (hold_atom)                    driver -> oracle     plan no batch beyond those already sent
//                                                       (a stop); answered with the last one
//   (stats_atom)                   driver -> oracle     answered with (summary, json): PlanStats
//                                                       of every batch planned so far
// Out:
//   (Frame<TrainerPlan>, Frame<Batch> slice, uint64_t batch_samples) -> trainer[w]
//   Frame<TrainerPlan>                                               -> partition[w]
//   (end_atom, uint64_t batches)   -> driver, once every batch is planned
//   (error_atom, text)             -> driver, when planning or the data fail
//   (error_atom, config_atom, text) -> driver instead, when the cache is too
//                                   small for the data: a config error
//
// Pacing: plan b is sent when b <= hold and every trainer has settled
// b − plans_ahead: the partitions fetch b's rows while b − plans_ahead + 1 …
// b − 1 compute, and at most plans_ahead batches per trainer wait in memory.
#pragma once

#include <caf/actor.hpp>
#include <caf/atom.hpp>

#include <optional>
#include <vector>

#include "actors/oracle/direct_planner.hpp"
#include "actors/oracle/planner_options.hpp"

namespace actorrec::oracle {

// Marks a failure that a config key caused (training.cache_rows), which the
// driver reports as a config error.
using config_atom = caf::atom_constant<caf::atom("arconfig")>;

struct OracleActorArgs {
  PlannerOptions options;  // trainers, table_rows, partitions, lookahead, private_rows, first_batch
  // Set for the modes without lookahead (ideal, static_hot, no_cache): the
  // oracle plans with a DirectPlanner; `options` still gives trainers,
  // table_rows and first_batch, which must agree with it.
  std::optional<DirectOptions> direct;
  std::vector<caf::actor> trainers;    // set by the start message (they need the oracle's handle)
  std::vector<caf::actor> partitions;  // one per trainer
  caf::actor driver;
  uint32_t plans_ahead = 4;
  uint64_t row_bytes = 0;  // bytes of one row's state, for the stats' byte figures
  int64_t hold = INT64_MAX;
  // dataset.dedup_groups: tables planned as the slice's distinct bag tuples.
  std::vector<std::vector<uint32_t>> dedup_groups;
};

caf::actor SpawnOracleActor(caf::actor_system& sys, OracleActorArgs args);

}  // namespace actorrec::oracle
