#include "actors/run/run_parts.hpp"

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include <spdlog/spdlog.h>

#include "actors/oracle/batch_rows.hpp"
#include "actors/sampler/dataset_source.hpp"
#include "data/gen/synthetic_generator.hpp"
#include "base/byte_units.hpp"
#include "base/digest.hpp"
#include "configs/memory_check.hpp"
#include "configs/row_state.hpp"
#include "gpu/backend_select.hpp"
#include "gpu/nccl_collective.hpp"
#include "models/init.hpp"
#include "models/metrics.hpp"

namespace actorrec::trainer {

Result<std::unique_ptr<RunParts>> RunParts::Create(const config::Config& cfg,
                                                   const std::vector<uint32_t>* hosted_trainers) {
  std::unique_ptr<RunParts> parts(new RunParts());
  parts->cfg = cfg;
  const uint32_t W = static_cast<uint32_t>(cfg.cluster.TotalTrainers());
  const uint32_t S = static_cast<uint32_t>(cfg.cluster.TotalShards());
  if (W == 0 || S == 0) {
    return Status::InvalidArgument("cluster.member: a run needs at least one trainer and one embedding shard");
  }
  {  // The schema, from the first epoch's reader.
    auto reader = OpenEpoch(cfg, Split::kTrain, 0);
    if (!reader.ok()) return reader.status();
    parts->schema = (*reader)->schema();
  }
  if (Status st = CheckSchema(cfg, parts->schema); !st.ok()) return st;
  const uint32_t T = static_cast<uint32_t>(parts->schema.num_tables());
  for (const auto& t : parts->schema.tables) parts->table_rows.push_back(t.rows);
  parts->spec = models::SpecOf(cfg.model, static_cast<uint32_t>(parts->schema.num_dense()), T);
  const models::OptimizerSettings dense_settings = models::DenseSettingsOf(cfg.optimizer);
  const models::OptimizerSettings row_settings = models::SparseSettingsOf(cfg.optimizer);

  auto choice = gpu::ChooseBackend(cfg.training.backend, models::ResidencyOf(cfg.model.kind));
  if (!choice.ok()) return choice.status();
  parts->backend = *choice;
  auto hosts = [&](uint32_t w) {
    return hosted_trainers == nullptr ||
           std::find(hosted_trainers->begin(), hosted_trainers->end(), w) != hosted_trainers->end();
  };
  if (choice->cuda) {  // the hosted trainers' devices, in rank order
    std::vector<uint32_t> ranks;
    for (uint32_t w = 0; w < W; ++w) {
      if (hosts(w)) ranks.push_back(w);
    }
    auto devices = gpu::AssignDevices(cfg.training.devices, choice->device_count, ranks.size(), cfg.path);
    if (!devices.ok()) return devices.status();
    for (size_t k = 0; k < ranks.size(); ++k) parts->devices.push_back({ranks[k], (*devices)[k]});
    if (parts->devices.size() > 1) {
      spdlog::info("trainer ranks on CUDA devices {} ({})", gpu::DeviceList(parts->devices),
                   cfg.training.devices.empty() ? "round-robin over the " + std::to_string(choice->device_count) +
                                                      " this process sees"
                                                : std::string("training.devices"));
    }
  }
  // cluster.collective = "nccl" where this process's trainers cannot join
  // NCCL: refused here, at start-up, naming the key and why (the build, the
  // backend, or two of its trainers on one device).
  if (cfg.cluster.collective == "nccl" && (hosted_trainers == nullptr || !hosted_trainers->empty())) {
    const gpu::NcclReadiness ready =
        gpu::NcclReadinessOf(gpu::NcclSupport(), choice->cuda, choice->Line(), parts->devices);
    if (Status st = gpu::CheckNcclRequest(ready, cfg.path); !st.ok()) return st;
  }
  size_t hosted = 0;
  for (uint32_t w = 0; w < W; ++w) {
    gpu::Backend* backend = nullptr;
    if (hosts(w)) {
      gpu::BackendChoice mine = *choice;
      if (mine.cuda) mine.device = parts->devices[hosted].device;
      ++hosted;
      auto made = gpu::MakeBackend(mine);
      if (!made.ok()) return made.status();
      parts->backends.push_back(std::move(made).value());
      backend = parts->backends.back().get();
    } else {
      if (!parts->idle_backend) parts->idle_backend = gpu::MakeCpuBackend();
      backend = parts->idle_backend.get();
    }
    auto model = models::Model::Create(parts->spec, backend);
    if (!model.ok()) return model.status();
    (*model)->Initialize(cfg.run.seed);
    if (!parts->row_optimizer) {
      parts->row_optimizer = std::make_unique<models::RowOptimizer>(cfg.optimizer.sparse, row_settings,
                                                                   (*model)->embedding_width());
    }
    const size_t params = (*model)->params().size();
    auto dense = std::make_unique<models::DenseOptimizer>(cfg.optimizer.dense, dense_settings, params);
    parts->trainers.push_back(std::make_unique<TrainerCore>(std::move(model).value(), std::move(dense),
                                                            parts->row_optimizer.get(), backend,
                                                            parts->spec.pooling, T, 0));
    if (const int g = cfg.dataset.dense_dedup_group; g >= 0) {
      parts->trainers.back()->SetDenseGroup(cfg.dataset.dedup_groups[static_cast<size_t>(g)]);
    }
  }
  const embedding::RowFormat format{parts->row_optimizer->width(), parts->row_optimizer->state_floats()};
  const RunParts* self = parts.get();
  for (uint32_t s = 0; s < S; ++s) {
    parts->shards.push_back(std::make_unique<embedding::ShardStore>(
        s, S, parts->table_rows, format, [self](uint32_t t, uint64_t r, float* out) { self->InitRow(t, r, out); }));
  }
  return parts;
}

void RunParts::InitRow(uint32_t t, uint64_t r, float* out) const {
  models::InitRowWeights(cfg.run.seed, t, r, table_rows[t], spec.embedding_dim, row_optimizer->width(), out);
  row_optimizer->InitState(out + row_optimizer->width());
}

BatchSequence::Options RunParts::SequenceOptions() const {
  BatchSequence::Options seq;
  seq.batch_size = static_cast<uint32_t>(cfg.training.batch_size);
  seq.epochs = static_cast<uint32_t>(cfg.training.epochs);
  seq.max_batches = cfg.training.max_batches;
  seq.source = SourceName(cfg, Split::kTrain);
  return seq;
}

BatchSequence::SourceFactory RunParts::TrainSource() const {
  const config::Config c = cfg;
  return [c, tally = train_bad_records](uint32_t epoch) -> Result<std::unique_ptr<data::SampleReader>> {
    auto reader = OpenEpoch(c, Split::kTrain, epoch);
    if (!reader.ok()) return reader.status();
    return data::Tallied(std::move(reader).value(), tally);
  };
}

RunParts::LatestRows RunParts::EachRow(std::function<Status(uint32_t t, data::RowId r, float* out)> one) const {
  const size_t floats = row_optimizer->row_floats();
  return [one = std::move(one), floats](const wire::RowKeys& keys, float* out) {
    for (size_t i = 0; i < keys.size(); ++i) {
      if (Status st = one(keys.tables[i], keys.rows[i], out + i * floats); !st.ok()) return st;
    }
    return Status::Ok();
  };
}

Result<EvalReport> RunParts::Evaluate(uint64_t max_samples, const LatestRows& latest, const ScoreSink& scores) {
  auto reader = OpenDatasetSplit(cfg, Split::kEval);
  if (!reader.ok()) return reader.status();
  const uint32_t floats = row_optimizer->row_floats();
  const uint32_t width = row_optimizer->width();
  const size_t block_size = static_cast<size_t>(cfg.training.batch_size);
  oracle::BatchRowsBuilder builder(table_rows);
  models::MetricAccumulator metrics;
  data::SampleBlock block;
  oracle::BatchRows rows;
  std::vector<oracle::TableFeatures> features(T());
  std::vector<float> staged, pooled, logits;
  wire::RowKeys keys;
  uint64_t seen = 0;
  TrainerCore& scorer = *trainers[0];
  while (max_samples == 0 || seen < max_samples) {
    size_t want = block_size;
    if (max_samples != 0) want = std::min<uint64_t>(want, max_samples - seen);
    if (Status st = (*reader)->Next(want, &block); !st.ok()) return st;
    if (block.empty()) break;
    if (Status st = builder.Build(block, 1, &rows); !st.ok()) return st;
    uint32_t next = 0;
    for (uint32_t t = 0; t < T(); ++t) next += static_cast<uint32_t>(rows.slice(0, t).rows.size());
    staged.resize(size_t{next} * floats);
    next = 0;
    keys.clear();
    for (uint32_t t = 0; t < T(); ++t) {
      const oracle::SliceTable& slice = rows.slice(0, t);
      features[t].table = t;
      features[t].inverse = slice.inverse;
      features[t].offsets = slice.offsets;
      features[t].unique_slots.resize(slice.rows.size());
      for (size_t u = 0; u < slice.rows.size(); ++u, ++next) {
        features[t].unique_slots[u] = next;
        keys.push_back(t, slice.rows[u]);
      }
    }
    if (Status st = latest(keys, staged.data()); !st.ok()) return st;
    const size_t n = block.size();
    pooled.resize(n * T() * width);
    logits.resize(n);
    PoolSlice(scorer.backend(), staged.data(), floats, width, scorer.pooling(), features, n, pooled.data());
    scorer.model().Predict(ViewOf(block), pooled.data(), logits.data());
    metrics.Add(logits, block.labels);
    if (scores) {
      if (Status st = scores(block, logits); !st.ok()) return st;
    }
    seen += n;
  }
  // The eval split's readers skip under the same policy: say what, and
  // refuse to score nothing (an AUC of no samples is no figure).
  const data::BadRecords& bad = (*reader)->bad_records();
  if (seen == 0) return data::NoSamples(SourceName(cfg, Split::kEval), bad);
  if (bad.skipped > 0) spdlog::warn("evaluation split {}: {}", SourceName(cfg, Split::kEval), data::DescribeSkipped(bad));
  EvalReport report;
  report.samples = seen;
  report.auc = metrics.auc();
  report.log_loss = metrics.log_loss();
  report.accuracy = metrics.accuracy();
  if (const auto* gen = dynamic_cast<const data::gen::SyntheticGenerator*>(reader->get())) {
    report.bayes_auc = gen->BayesAuc();
  }
  return report;
}

uint64_t RunParts::ParameterDigest() const {
  const auto first = trainers[0]->model().params();
  for (uint32_t w = 1; w < W(); ++w) {
    const auto other = trainers[w]->model().params();
    ACTORREC_ASSERT(other.size() == first.size() && std::memcmp(other.data(), first.data(), first.size_bytes()) == 0,
                    "dense replicas diverged");
  }
  std::vector<uint64_t> shard_digests;
  for (const auto& s : shards) shard_digests.push_back(s->Digest());
  return CombineParameterDigest(DenseDigest(*trainers[0]), shard_digests);
}

Result<oracle::PlannerOptions> PlannerOptionsOf(const config::Config& cfg, std::vector<uint64_t> table_rows,
                                                uint64_t first_batch) {
  oracle::PlannerOptions options;
  options.first_batch = first_batch;
  options.trainers = static_cast<uint32_t>(cfg.cluster.TotalTrainers());
  options.partitions = oracle::OnePartition(table_rows.size(), static_cast<uint32_t>(cfg.training.cache_rows));
  options.table_rows = std::move(table_rows);
  options.lookahead = static_cast<uint32_t>(cfg.training.lookahead);
  options.private_rows = cfg.training.mode != config::Mode::kReplicated;
  options.delayed_sync = cfg.training.mode != config::Mode::kLrpp && cfg.training.mode != config::Mode::kReplicated;
  if (Status st = oracle::Validate(options); !st.ok()) return Status::InvalidArgument("training: " + st.message());
  return options;
}

Result<HotSet> HotRows(const config::Config& cfg) {
  BatchSequence::Options seq;
  seq.batch_size = static_cast<uint32_t>(cfg.training.batch_size);
  seq.epochs = 1;
  seq.max_batches = kHotProbeBatches;
  BatchSequence probe([cfg](uint32_t epoch) { return OpenEpoch(cfg, Split::kTrain, epoch); }, seq);
  const uint32_t trainers = static_cast<uint32_t>(cfg.cluster.TotalTrainers());
  std::unordered_map<uint64_t, uint64_t> counts;
  // Per probe batch, its distinct rows: the one trainer that touches each,
  // or kShared when several do.
  constexpr uint32_t kShared = UINT32_MAX;
  std::unordered_map<uint64_t, uint32_t> users;
  std::vector<uint32_t> privates(trainers);
  uint64_t staging_needed = 0, index = 0, worst = 0;
  data::Batch batch;
  while (true) {
    if (Status st = probe.Next(&batch); !st.ok()) return st;
    if (probe.done()) break;
    users.clear();
    const uint64_t n = batch.samples.size();
    for (uint32_t w = 0; w < trainers; ++w) {
      const size_t begin = n * w / trainers, end = n * (w + 1) / trainers;  // the trainer's slice
      for (size_t t = 0; t < batch.samples.tables.size(); ++t) {
        const auto& kjt = batch.samples.tables[t];
        for (uint32_t p = kjt.offsets[begin]; p < kjt.offsets[end]; ++p) {
          const uint64_t key = uint64_t{t} << 32 | kjt.values[p];
          ++counts[key];
          auto [it, fresh] = users.emplace(key, w);
          if (!fresh && it->second != w) it->second = kShared;
        }
      }
    }
    // The batch's rows staged as DirectPlanner stages them, none hot: a slot
    // per shared row, the private rows of different trainers sharing slots.
    uint64_t shared = 0;
    std::fill(privates.begin(), privates.end(), 0);
    for (const auto& [key, user] : users) {
      if (user == kShared) {
        ++shared;
      } else {
        ++privates[user];
      }
    }
    const uint64_t need = shared + *std::max_element(privates.begin(), privates.end());
    if (need > staging_needed) {
      staging_needed = need;
      worst = index;
    }
    ++index;
  }
  const uint64_t budget = cfg.training.cache_rows;
  if (staging_needed > budget) {
    return Status::InvalidArgument("training.cache_rows = " + std::to_string(budget) +
                                   " is too small for static_hot: batch " + std::to_string(worst) + " alone needs " +
                                   std::to_string(staging_needed) + " slots per trainer to stage its rows");
  }
  // Staging for any batch's rows whether hot or not (a later batch may miss
  // rows no probe batch did), an eighth more for batches that touch more
  // rows than the probe's; the rest of the budget holds the hottest rows.
  HotSet hot;
  hot.staging = static_cast<uint32_t>(std::min(budget, staging_needed + (staging_needed + 7) / 8));
  std::vector<std::pair<uint64_t, uint64_t>> ranked(counts.begin(), counts.end());
  const size_t keep = std::min<size_t>(ranked.size(), budget - hot.staging);
  std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(keep), ranked.end(),
                    [](const auto& a, const auto& b) { return a.second != b.second ? a.second > b.second : a.first < b.first; });
  for (size_t i = 0; i < keep; ++i) hot.rows.push_back(ranked[i].first);
  std::sort(hot.rows.begin(), hot.rows.end());
  return hot;
}

std::string HotRowsReport(size_t hot_rows) {
  return "static_hot: " + std::to_string(hot_rows) + " hot rows from the first " + std::to_string(kHotProbeBatches) +
         " batches";
}

uint64_t CacheSlotsOf(const config::Config& cfg, const std::vector<uint64_t>& table_rows) {
  const uint64_t cache_rows = static_cast<uint64_t>(cfg.training.cache_rows);
  switch (cfg.training.mode) {
    case config::Mode::kIdeal: return oracle::TotalRows(table_rows);
    default: return cache_rows;
  }
}

bool IsDirectMode(config::Mode mode) {
  return mode == config::Mode::kIdeal || mode == config::Mode::kStaticHot || mode == config::Mode::kNoCache;
}

Result<oracle::DirectOptions> DirectOptionsOf(const config::Config& cfg, std::vector<uint64_t> table_rows,
                                              uint64_t first_batch) {
  using Resident = oracle::DirectOptions::Resident;
  oracle::DirectOptions options;
  options.trainers = static_cast<uint32_t>(cfg.cluster.TotalTrainers());
  options.table_rows = std::move(table_rows);
  options.first_batch = first_batch;
  options.staging = static_cast<uint32_t>(cfg.training.cache_rows);
  switch (cfg.training.mode) {
    case config::Mode::kIdeal: {
      options.resident = Resident::kAll;
      options.staging = 0;
      const uint64_t total = oracle::TotalRows(options.table_rows);
      if (total >= (uint64_t{1} << 31)) {
        return Status::InvalidArgument("training.mode = \"ideal\" keeps every row in every trainer; " +
                                       std::to_string(total) + " rows are too many (use another mode)");
      }
      // The config's memory check cannot size this cache: the data decides
      // how many rows there are.
      int most_trainers = 0;
      for (const config::Member& m : cfg.cluster.members) most_trainers = std::max(most_trainers, m.trainers);
      const uint32_t dim = static_cast<uint32_t>(cfg.model.embedding_dim);
      const uint64_t row_bytes = (dim + config::RowStateFloats(cfg.optimizer.sparse, dim)) * sizeof(float);
      const uint64_t bytes = total * static_cast<uint64_t>(most_trainers) * row_bytes;
      if (const config::MemoryBudget memory = config::MachineMemory(); bytes > memory.bytes) {
        return Status::InvalidArgument("training.mode = \"ideal\" keeps every row (" + std::to_string(total) +
                                       ") in every trainer: at least " + DecimalBytes(static_cast<double>(bytes)) +
                                       " for " + std::to_string(most_trainers) + " trainer(s), more than " +
                                       memory.source + " of memory (use another mode)");
      }
      options.report = "ideal: every row (" + std::to_string(total) + ") resident in every trainer, fetched at its first use";
      break;
    }
    case config::Mode::kStaticHot: {
      auto hot = HotRows(cfg);
      if (!hot.ok()) return hot.status();
      options.resident = Resident::kListed;
      options.listed = std::move(hot->rows);
      options.staging = hot->staging;
      options.report = HotRowsReport(options.listed.size()) + "; other rows staged in " +
                       std::to_string(options.staging) + " slots for their batch (together training.cache_rows)";
      break;
    }
    case config::Mode::kNoCache:
      options.report = "no_cache: every row fetched for its batch into " + std::to_string(options.staging) +
                       " staging slots, written back after it";
      break;
    default: return Status::InvalidArgument("training.mode: " + std::string(config::ModeName(cfg.training.mode)) +
                                            " plans with lookahead, not directly");
  }
  if (Status st = oracle::Validate(options); !st.ok()) return Status::InvalidArgument("training: " + st.message());
  return options;
}

uint64_t CombineParameterDigest(uint64_t dense, const std::vector<uint64_t>& shard_digests) {
  uint64_t digest = dense;
  for (uint64_t s : shard_digests) digest = Digest64(std::to_string(s), digest);
  return digest;
}

std::vector<ShardUsage> RunParts::ShardUsages() const {
  std::vector<ShardUsage> usage;
  for (const auto& shard : shards) usage.push_back({shard->resident_rows(), shard->memory_bytes()});
  return usage;
}

}  // namespace actorrec::trainer
