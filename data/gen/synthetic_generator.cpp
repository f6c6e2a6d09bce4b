// Block generation and streaming of synthetic samples.
#include "data/gen/synthetic_generator.hpp"

#include <algorithm>
#include <memory>
#include <thread>
#include <utility>

#include "data/gen/exact_auc.hpp"

namespace actorrec::data::gen {

namespace {

// After this many redraws of one id of a distinct bag, the id is the hottest
// row not yet in the bag: bounds the time on tiny or very skewed tables.
constexpr int kMaxRedraws = 32;

// The RNG streams of a block, one per column.
constexpr uint64_t kDenseStream = 0;
constexpr uint64_t kLabelStream = 1;
constexpr uint64_t kFirstTableStream = 2;
// Keys of the tables' permutations and of the label model's centring, apart
// from the blocks' keys hash(seed, block index) (ASCII "perm" and "center").
constexpr uint64_t kPermutationKey = 0x7065726dULL;
constexpr uint64_t kCenterKey = 0x63656e746572ULL;

}  // namespace

Result<std::unique_ptr<SyntheticGenerator>> SyntheticGenerator::Open(GeneratorOptions options) {
  Status s = Validate(options);
  if (!s.ok()) return s;
  return std::unique_ptr<SyntheticGenerator>(new SyntheticGenerator(std::move(options)));
}

SyntheticGenerator::SyntheticGenerator(GeneratorOptions options)
    : options_(std::move(options)), schema_(SchemaOf(options_)), truth_(options_) {
  for (size_t t = 0; t < options_.tables.size(); ++t) {
    const TableOptions& table = options_.tables[t];
    rows_.emplace_back(table.access, table.rows, HashPair(HashPair(options_.seed, kPermutationKey), t));
    bags_.emplace_back(table.bag);
    const bool single_hot = table.bag.kind == BagLength::Kind::kFixed && table.bag.min == 1;
    plans_.push_back({table.session_dup_prob, single_hot, truth_.HasLatent(t)});
  }
  // The centres are estimated from 64 Ki draws of each table: the error of a
  // table's mean effect is ws_t / 256, far below the logit's spread.
  constexpr size_t kCenterDraws = size_t{1} << 16;
  std::vector<RowId> draws(kCenterDraws);
  for (size_t t = 0; t < options_.tables.size(); ++t) {
    Rng rng(HashPair(HashPair(options_.seed, kCenterKey), t));
    for (RowId& id : draws) id = rows_[t].Sample(rng);
    truth_.CenterTable(t, draws);
  }
  const uint64_t s = options_.session_length;
  block_samples_ = (kTargetBlockSamples + s - 1) / s * s;
  num_blocks_ = (options_.samples + block_samples_ - 1) / block_samples_;
}

void SyntheticGenerator::DrawBag(size_t t, Rng& rng, SampleBlock::Table* table) const {
  const TableOptions& opt = options_.tables[t];
  uint64_t length = bags_[t].Sample(rng);
  if (!opt.distinct_ids) {
    for (uint64_t k = 0; k < length; ++k) table->values.push_back(rows_[t].Sample(rng));
    return;
  }
  length = std::min(length, opt.rows);
  const size_t begin = table->values.size();
  auto in_bag = [&](RowId id) {
    return std::find(table->values.begin() + begin, table->values.end(), id) != table->values.end();
  };
  for (uint64_t k = 0; k < length; ++k) {
    RowId id = rows_[t].Sample(rng);
    for (int tries = 0; in_bag(id) && tries < kMaxRedraws; ++tries) id = rows_[t].Sample(rng);
    for (uint64_t rank = 0; in_bag(id); ++rank) id = rows_[t].RowOfRank(rank);
    table->values.push_back(id);
  }
}

void SyntheticGenerator::GenerateDense(uint64_t block_key, size_t count, float* out, double* logit) const {
  const uint32_t num_dense = options_.num_dense;
  Rng rng(HashPair(block_key, kDenseStream));
  const uint32_t session = options_.session_length;
  const double dup = options_.session_dense_dup_prob;
  for (size_t i = 0; i < count; ++i) {
    float* dense = out + i * num_dense;
    // The previous sample's features and, since this is the logit's first
    // term after the bias (AppendBlock), its logit so far: the same bits.
    // No draw when dup is 0, so that such streams stay as they were.
    if (i % session != 0 && dup > 0.0 && rng.Uniform() < dup) {
      std::copy(dense - num_dense, dense, dense);
      logit[i] = logit[i - 1];
      continue;
    }
    for (uint32_t j = 0; j < num_dense; j += 2) {
      // Two latents per word, four bytes each (see ByteSum).
      const uint64_t w = rng.Next();
      const uint32_t level0 = ByteSum(static_cast<uint32_t>(w));
      dense[j] = truth_.DenseValue(j, level0);
      logit[i] += truth_.DenseEffect(j, level0);
      if (j + 1 < num_dense) {
        const uint32_t level1 = ByteSum(static_cast<uint32_t>(w >> 32));
        dense[j + 1] = truth_.DenseValue(j + 1, level1);
        logit[i] += truth_.DenseEffect(j + 1, level1);
      }
    }
  }
}

void SyntheticGenerator::GenerateTable(size_t t, uint64_t block_key, size_t count, SampleBlock::Table* table,
                                       double* logit, double* latent) const {
  constexpr int kDim = GroundTruth::kLatentDim;
  const TablePlan& plan = plans_[t];
  const uint32_t session = options_.session_length;
  const size_t base = table->offsets.size() - 1;  // the block's first sample in `table`
  table->offsets.reserve(base + count + 1);
  table->values.reserve(table->values.size() +
                        static_cast<size_t>(static_cast<double>(count) * (options_.tables[t].bag.Mean() + 1.0)));
  Rng rng(HashPair(block_key, kFirstTableStream + t));
  double effect = 0.0;  // the current bag's term, kept while a session repeats it
  for (size_t i = 0; i < count; ++i) {
    double* v = latent + i * kDim;
    if (i % session != 0 && plan.dup_prob > 0.0 && rng.Uniform() < plan.dup_prob) {
      const BagOffsets& offsets = table->offsets;  // read-only: a compact (single-hot) form stays compact
      for (uint32_t k = offsets[base + i - 1]; k < offsets[base + i]; ++k) {
        const RowId id = table->values[k];
        table->values.push_back(id);
      }
      if (plan.in_pair) std::copy(v - kDim, v, v);
    } else if (plan.single_hot) {
      // Criteo's case, on the hot path: one id, no bag to average.
      const RowId id = rows_[t].Sample(rng);
      table->values.push_back(id);
      effect = truth_.RowEffect(t, id);
      if (plan.in_pair) {
        std::fill(v, v + kDim, 0.0);
        truth_.AddRowLatent(t, id, v);
      }
    } else {
      const size_t begin = table->values.size();
      DrawBag(t, rng, table);
      const size_t length = table->values.size() - begin;
      effect = 0.0;
      if (plan.in_pair) std::fill(v, v + kDim, 0.0);
      for (size_t k = begin; k < table->values.size(); ++k) {
        effect += truth_.RowEffect(t, table->values[k]);
        if (plan.in_pair) truth_.AddRowLatent(t, table->values[k], v);
      }
      // A bag acts through its mean, as an embedding bag with mean pooling.
      if (length > 1) {
        const double inv = 1.0 / static_cast<double>(length);
        effect *= inv;
        if (plan.in_pair)
          for (int k = 0; k < kDim; ++k) v[k] *= inv;
      }
    }
    table->CloseBag();
    logit[i] += effect;
  }
}

void SyntheticGenerator::GenerateBlock(uint64_t index, SampleBlock* out, std::vector<float>* probabilities) const {
  out->Reset(options_.num_dense, options_.tables.size());
  probabilities->clear();
  AppendBlock(index, out, probabilities);
}

void SyntheticGenerator::AppendBlock(uint64_t index, SampleBlock* out, std::vector<float>* probabilities) const {
  ACTORREC_ASSERT(index < num_blocks_, "block index past the end");
  ACTORREC_ASSERT(out->num_dense == options_.num_dense && out->tables.size() == options_.tables.size(),
                  "block shaped for another schema");
  constexpr int kDim = GroundTruth::kLatentDim;
  const uint64_t first = index * block_samples_;
  const size_t count = static_cast<size_t>(std::min(block_samples_, options_.samples - first));
  const size_t num_tables = options_.tables.size();
  const size_t base = out->size();
  out->labels.resize(base + count);
  out->dense.resize((base + count) * options_.num_dense);
  probabilities->resize(probabilities->size() + count);
  float* probability = probabilities->data() + probabilities->size() - count;

  // Feature-major: each table's column is drawn in one loop, so only its
  // sampler needs to be in cache: a 768 KiB Zipf head fits a 1 MiB L2 alone,
  // not beside 25 other tables. Each column has its own RNG stream, keyed
  // by (seed, block, column).
  const uint64_t stream_seed = options_.stream == 0 ? options_.seed : HashPair(options_.seed, options_.stream);
  const uint64_t block_key = HashPair(stream_seed, index);
  // Per-thread scratch, kept between blocks: freshly allocated, the latents
  // (128 KiB a table) came from mmap and cost a page fault per 4 KiB.
  thread_local std::vector<double> logit;
  thread_local std::vector<double> latent;
  logit.assign(count, truth_.bias());
  GenerateDense(block_key, count, out->dense.data() + base * options_.num_dense, logit.data());
  std::vector<size_t> latent_at(num_tables, 0);  // where table t's latents start in `latent`
  size_t latent_size = 0;
  for (size_t t = 0; t < num_tables; ++t) {
    latent_at[t] = latent_size;
    if (plans_[t].in_pair) latent_size += count * kDim;
  }
  latent.resize(latent_size);
  for (size_t t = 0; t < num_tables; ++t)
    GenerateTable(t, block_key, count, &out->tables[t], logit.data(), latent.data() + latent_at[t]);
  for (const auto& [a, b] : truth_.pairs()) {
    const double* va = latent.data() + latent_at[a];
    const double* vb = latent.data() + latent_at[b];
    for (size_t i = 0; i < count; ++i) {
      double dot = 0.0;
      for (int k = 0; k < kDim; ++k) dot += va[i * kDim + k] * vb[i * kDim + k];
      logit[i] += truth_.pair_weight() * dot;
    }
  }
  Rng rng(HashPair(block_key, kLabelStream));
  for (size_t i = 0; i < count; ++i) {
    const double p = GroundTruth::Probability(logit[i]);
    probability[i] = static_cast<float>(p);
    out->labels[base + i] = rng.Uniform() < p ? 1.0f : 0.0f;
  }
}

void SyntheticGenerator::Refill() {
  const uint64_t threads = options_.threads;
  const uint64_t count = std::min(num_blocks_ - next_block_, threads == 1 ? 1 : threads * kBlocksPerThread);
  if (pending_.size() < count) pending_.resize(count);
  const uint64_t base = next_block_;
  if (threads == 1 || count == 1) {
    for (uint64_t k = 0; k < count; ++k) GenerateBlock(base + k, &pending_[k].block, &pending_[k].probabilities);
  } else {
    // Threads per refill rather than a pool: each thread has kBlocksPerThread
    // blocks, milliseconds of work, against tens of microseconds to start it.
    std::vector<std::thread> workers;
    for (uint64_t w = 0; w < std::min(threads, count); ++w) {
      workers.emplace_back([this, w, threads, count, base] {
        for (uint64_t k = w; k < count; k += threads)
          GenerateBlock(base + k, &pending_[k].block, &pending_[k].probabilities);
      });
    }
    for (auto& worker : workers) worker.join();
  }
  next_block_ += count;
  pending_count_ = count;
  pending_index_ = 0;
  pending_offset_ = 0;
}

Status SyntheticGenerator::Next(size_t max_samples, SampleBlock* out) {
  out->Reset(schema_);
  while (out->size() < max_samples) {
    const size_t want = max_samples - out->size();
    if (pending_index_ == pending_count_) {
      if (next_block_ == num_blocks_) break;
      // Whole blocks go straight into `out` on one thread: no copy.
      const uint64_t next_size = std::min(block_samples_, options_.samples - next_block_ * block_samples_);
      if (options_.threads == 1 && want >= next_size) {
        direct_probabilities_.clear();
        AppendBlock(next_block_++, out, &direct_probabilities_);
        Record(direct_probabilities_, 0, *out, next_size);
        continue;
      }
      Refill();
    }
    Pending& p = pending_[pending_index_];
    const size_t available = p.probabilities.size() - pending_offset_;
    const size_t n = std::min(available, want);
    if (out->empty() && pending_offset_ == 0 && n == available) {
      std::swap(*out, p.block);  // a whole block: no copy
    } else {
      out->Append(p.block, pending_offset_, pending_offset_ + n);
    }
    Record(p.probabilities, pending_offset_, *out, n);
    pending_offset_ += n;
    if (pending_offset_ == p.probabilities.size()) {
      ++pending_index_;
      pending_offset_ = 0;
    }
  }
  return Status::Ok();
}

void SyntheticGenerator::Record(const std::vector<float>& probabilities, size_t begin, const SampleBlock& out,
                                size_t n) {
  position_ += n;
  const uint64_t room = options_.auc_sample_cap - std::min<uint64_t>(options_.auc_sample_cap, auc_labels_.size());
  const size_t keep = static_cast<size_t>(std::min<uint64_t>(n, room));
  auc_scores_.insert(auc_scores_.end(), probabilities.begin() + begin, probabilities.begin() + begin + keep);
  auc_labels_.insert(auc_labels_.end(), out.labels.end() - n, out.labels.end() - n + keep);
}

double SyntheticGenerator::BayesAuc() const { return ExactAuc(auc_scores_, auc_labels_); }

}  // namespace actorrec::data::gen
