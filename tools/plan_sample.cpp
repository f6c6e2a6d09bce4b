// Planning a config's first batches.
#include "tools/plan_sample.hpp"

#include <utility>
#include <vector>

#include "actors/run/run_parts.hpp"
#include "actors/sampler/batch_sequence.hpp"
#include "actors/sampler/dataset_source.hpp"
#include "models/optimizers.hpp"

namespace actorrec {

Status PlanConfig(const config::Config& cfg, PlanSample* sample, std::ostream* out, oracle::DumpReport* report) {
  auto first_epoch = OpenEpoch(cfg, Split::kTrain, 0);
  if (!first_epoch.ok()) return first_epoch.status();
  sample->schema = (*first_epoch)->schema();
  first_epoch->reset();

  std::vector<uint64_t> table_rows;
  for (const auto& t : sample->schema.tables) table_rows.push_back(t.rows);
  auto planned = trainer::PlannerOptionsOf(cfg, std::move(table_rows), 0);
  if (!planned.ok()) return planned.status();
  const oracle::PlannerOptions& options = *planned;
  sample->trainers = options.trainers;

  const models::RowOptimizer row_optimizer(cfg.optimizer.sparse, models::SparseSettingsOf(cfg.optimizer),
                                           static_cast<uint32_t>(cfg.model.embedding_dim));
  oracle::DumpOptions dump;
  dump.batches = sample->batches;
  dump.trainer = sample->trainer;
  dump.bytes_per_row = uint64_t{row_optimizer.row_floats()} * sizeof(float);
  if (trainer::IsDirectMode(cfg.training.mode)) {
    auto direct = trainer::DirectOptionsOf(cfg, options.table_rows, 0);
    if (!direct.ok()) return direct.status();
    dump.direct = std::move(direct).value();
  }

  BatchSequence::Options seq;
  seq.batch_size = static_cast<uint32_t>(cfg.training.batch_size);
  seq.epochs = static_cast<uint32_t>(cfg.training.epochs);
  seq.max_batches = cfg.training.max_batches;
  BatchSequence sequence([&cfg](uint32_t epoch) { return OpenEpoch(cfg, Split::kTrain, epoch); }, seq);
  data::Batch batch;
  uint64_t samples = 0, ids = 0;
  oracle::BatchSource source = [&](data::SampleBlock* block) -> Result<bool> {
    if (Status s = sequence.Next(&batch); !s.ok()) return s;
    if (sequence.done()) return false;
    std::swap(*block, batch.samples);
    samples += block->size();
    for (const auto& t : block->tables) ids += t.values.size();
    return true;
  };
  const Status s = oracle::DumpPlans(options, source, dump, out, report);
  sample->ids_per_sample = samples > 0 ? static_cast<double>(ids) / static_cast<double>(samples) : 0.0;
  return s;
}

}  // namespace actorrec
