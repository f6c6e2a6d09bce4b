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
// checkpoint readable. The two newest checkpoints are kept. Saving and
// loading remove the temporary directories of writers on this host that
// died. One checksum covers the dense file's metadata (the data position
// included) and its tensors.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "actors/sampler/batch_sequence.hpp"
#include "actors/run/run_parts.hpp"
#include "base/status.hpp"

namespace actorrec::trainer {

struct RunPosition {
  uint64_t batches = 0;  // global batches done: the resumed run's first_batch
  BatchPosition next;    // where the data resumes
};

// Writes shard s's checkpoint file at `path` as the state after `batch`
// global batches, wherever the shard's store is (an actor in another
// process writes it on its host).
using ShardWriter = std::function<Status(uint32_t s, const std::string& path, int64_t batch)>;

// Saves trainer 0's dense replica and optimizer state and every shard as
// the state after `position`. The shards must hold every row's latest value.
// write_shard null: the shards are parts.shards.
Status SaveRunCheckpoint(const RunParts& parts, const std::string& dir, const RunPosition& position,
                         const ShardWriter& write_shard = nullptr);

// The pieces of SaveRunCheckpoint, for a cluster whose snapshot is written
// piece by piece on several hosts (actors/run/snapshot_keeper.hpp).
// The name of shard s's file in a checkpoint directory.
std::string ShardCheckpointFile(uint32_t s, uint32_t S);
// Writes trainer 0's dense replica and optimizer state with the position and
// the config's identity (dense.safetensors) at `path`; InvalidArgument when
// the parameters are not all finite.
Status WriteDenseCheckpoint(const RunParts& parts, const std::string& path, const RunPosition& position);
// Creates the empty temporary directory of the checkpoint after `batches`
// in `dir` (removing dead writers' temporaries first); its absolute path.
Result<std::string> BeginCheckpoint(const std::string& dir, uint64_t batches);
// Renames the temporary directory `tmp` into place as batch-<batches>,
// then replaces LATEST, and keeps the newest two checkpoints.
Status CommitCheckpoint(const std::string& dir, const std::string& tmp, uint64_t batches);

// Loads the newest checkpoint of `dir` into `parts` (freshly created from the
// config to resume): the dense state into every trainer, the shards
// replaced (only those `shards` marks, when given: a cluster member loads
// the shards it hosts). InvalidArgument naming the file and the config key
// when the checkpoint was made with a different model, optimizer, seed,
// batch size, shard count, dense features or tables (rows, dims);
// Corruption / NotFound naming the file otherwise.
Result<RunPosition> LoadRunCheckpoint(const std::string& dir, RunParts* parts,
                                      const std::vector<bool>* shards = nullptr);

}  // namespace actorrec::trainer
