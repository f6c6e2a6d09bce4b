// Planning a config's first batches.
#include "tools/plan_sample.hpp"

#include <algorithm>
#include <map>
#include <streambuf>
#include <string>
#include <utility>
#include <vector>

#include "actors/run/run_parts.hpp"
#include "actors/sampler/batch_sequence.hpp"
#include "actors/sampler/dataset_source.hpp"
#include "gpu/backend_select.hpp"
#include "models/model.hpp"
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
  dump.on_plan = sample->on_plan;
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

namespace {

class NullBuffer : public std::streambuf {
 protected:
  int overflow(int c) override { return c; }
  std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
};

}  // namespace

Status MeasurePlans(const config::Config& cfg, PlanSample* sample, oracle::DumpReport* report) {
  NullBuffer nothing;
  std::ostream sink(&nothing);
  return PlanConfig(cfg, sample, &sink, report);
}

Result<planner::Workload> WorkloadOf(const config::Config& cfg, const PlanSample& sample,
                                     const planner::HardwareProfile& hw, bool one_host) {
  const models::ModelSpec spec = models::SpecOf(cfg.model, static_cast<uint32_t>(sample.schema.num_dense()),
                                                static_cast<uint32_t>(sample.schema.num_tables()));
  auto choice = gpu::ChooseBackend("cpu");
  if (!choice.ok()) return choice.status();
  auto backend = gpu::MakeBackend(*choice);
  if (!backend.ok()) return backend.status();
  auto model = models::Model::Create(spec, backend->get());
  if (!model.ok()) return model.status();
  const models::RowOptimizer rows(cfg.optimizer.sparse, models::SparseSettingsOf(cfg.optimizer),
                                  static_cast<uint32_t>(cfg.model.embedding_dim));
  planner::Workload work;
  work.trainers = static_cast<uint32_t>(cfg.cluster.TotalTrainers());
  work.shards = static_cast<uint32_t>(cfg.cluster.TotalShards());
  work.shard_hosts = 0;
  for (const auto& m : cfg.cluster.members) work.shard_hosts += m.embedding_shards > 0;
  work.batch = static_cast<uint32_t>(cfg.training.batch_size);
  work.flops_per_sample = models::MlpFlopsPerSample(spec);
  work.dense_bytes = static_cast<double>((*model)->params().size()) * sizeof(float);
  work.lookups_per_sample = sample.ids_per_sample;
  work.embedding_bytes = static_cast<double>((*model)->embedding_width()) * sizeof(float);
  work.row_bytes = static_cast<double>(rows.row_floats()) * sizeof(float);
  // The sync carries a row's gradient; its id is in every trainer's plan.
  work.sync_row_bytes = work.embedding_bytes;
  work.collective = planner::CollectiveFor(cfg.cluster.collective, hw);
  // Busy threads per host: a trainer's compute, the sampler's and the
  // oracle's work (they run beside the trainers, batch by batch).
  std::map<std::string, std::pair<uint32_t, uint32_t>> hosts;  // address -> trainers, other busy threads
  for (const auto& m : cfg.cluster.members) {
    auto& host = hosts[one_host ? std::string() : m.address];
    host.first += static_cast<uint32_t>(m.trainers);
    host.second += m.Has(config::Role::kSampler) + m.Has(config::Role::kOracle);
  }
  for (const auto& [address, host] : hosts) {
    if (host.first > 0) {
      work.compute_share = std::min(work.compute_share, planner::ComputeShare(hw.host_cores, host.first, host.second));
    }
  }
  return work;
}

planner::PlanRows RowsOf(const oracle::PlanStats& stats) {
  const auto& t = stats.totals();
  planner::PlanRows rows;
  rows.fetched = stats.PerBatch(t.fetched);
  rows.critical = stats.PerBatch(t.critical);
  rows.delayed = stats.PerBatch(t.delayed);
  rows.evictions = stats.PerBatch(t.evictions);
  rows.unique = stats.PerBatch(t.unique);
  return rows;
}

}  // namespace actorrec
