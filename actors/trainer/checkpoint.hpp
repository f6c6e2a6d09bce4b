// Checkpoints of a training run (docs/checkpoint_format.md).
//
//   <dir>/LATEST                  the name of the newest complete checkpoint
//   <dir>/batch-<k>/dense.safetensors
//       model.<tensor>            trainer 0's dense parameters (models/model.hpp names)
//       optimizer.<piece>         the dense optimizer's state (adam.m, adam.v, adam.step, …)
//       __metadata__              format, position and the config values a resume must keep
//   <dir>/batch-<k>/shard-<s>-of-<S>.ckpt
//                                 every row of shard s with its optimizer state
//                                 (actors/embedding/shard_store.hpp's checksummed format)
//
// A checkpoint is the state after k global batches with every cache empty:
// the driver first copies the rows its caches hold into the shards. Writing
// goes to a temporary directory that is renamed into place, then LATEST is
// replaced atomically, so a crash at any point leaves the previous
// checkpoint readable. The two newest checkpoints are kept.
#pragma once

#include <cstdint>
#include <string>

#include "actors/sampler/batch_sequence.hpp"
#include "actors/trainer/run_parts.hpp"
#include "base/status.hpp"

namespace actorrec::trainer {

struct RunPosition {
  uint64_t batches = 0;  // global batches done: the resumed run's first_batch
  BatchPosition next;    // where the data resumes
};

// Saves trainer 0's dense replica and optimizer state and every shard as
// the state after `position`. The shards must hold every row's latest value.
Status SaveRunCheckpoint(const RunParts& parts, const std::string& dir, const RunPosition& position);

// Loads the newest checkpoint of `dir` into `parts` (freshly created from the
// config to resume): the dense state into every trainer, the shards
// replaced. InvalidArgument naming the config key when the checkpoint was
// made with a different model, optimizer, seed, batch size or shard count;
// Corruption / NotFound naming the file otherwise.
Result<RunPosition> LoadRunCheckpoint(const std::string& dir, RunParts* parts);

}  // namespace actorrec::trainer
