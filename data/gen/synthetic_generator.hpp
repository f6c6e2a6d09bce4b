// SyntheticGenerator: a SampleReader of synthetic recommendation data (what
// `actorrec data gen` writes): skewed, possibly multi-hot tables, RecD-style
// sessions, and labels from a hidden model whose Bayes-optimal AUC it
// measures.
//
// Determinism: the stream is cut into fixed blocks of block_samples()
// samples, a multiple of the session length so that no session spans two
// blocks; block b draws from RNG streams seeded by hash(seed, b) alone (one
// stream per column: dense, labels, each table). So the
// samples depend only on the options (threads excepted): not on how many
// samples each Next asks for, nor on the thread count, nor on the machine.
//
// Sessions: samples [kS, (k + 1)S) form session k. Its first sample draws
// every feature afresh; each later one keeps the previous sample's bag of
// table t with probability d(t) (RecD's session duplication), else draws
// afresh. Dense features are drawn for every sample, or kept from the
// previous one with probability session_dense_dup_prob; labels are drawn
// for every sample.
//
// Thread-safety: Next and BayesAuc need external synchronisation (as every
// SampleReader); GenerateBlock is const and may run on any number of
// threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "data/gen/bag_length_sampler.hpp"
#include "data/gen/generator_options.hpp"
#include "data/gen/ground_truth.hpp"
#include "data/gen/row_sampler.hpp"
#include "data/sample_reader.hpp"

namespace actorrec::data::gen {

class SyntheticGenerator final : public SampleReader {
 public:
  // About 4096 samples a block: large enough to amortise seeding and thread
  // hand-off, small enough that a few blocks per thread stay in cache.
  static constexpr uint64_t kTargetBlockSamples = 4096;
  // Blocks each worker makes per refill: more hides uneven block times at
  // the cost of memory for the blocks made ahead.
  static constexpr uint64_t kBlocksPerThread = 4;

  // InvalidArgument when the options fail Validate.
  static Result<std::unique_ptr<SyntheticGenerator>> Open(GeneratorOptions options);

  const DatasetSchema& schema() const override { return schema_; }
  Status Next(size_t max_samples, SampleBlock* out) override;
  // Always empty: the generator makes no bad records.
  const BadRecords& bad_records() const override { return bad_; }

  const GeneratorOptions& options() const { return options_; }
  uint64_t block_samples() const { return block_samples_; }
  uint64_t num_blocks() const { return num_blocks_; }
  // Samples returned by Next so far.
  uint64_t position() const { return position_; }

  // Replaces `out` with block `index` and `probabilities` with its samples'
  // true click probabilities. REQUIRES: index < num_blocks().
  void GenerateBlock(uint64_t index, SampleBlock* out, std::vector<float>* probabilities) const;

  // The exact AUC of the true probabilities against the sampled labels over
  // the first min(position(), auc_sample_cap) samples: the best AUC any model
  // can reach on them. NaN before both labels have been seen.
  double BayesAuc() const;
  uint64_t auc_samples() const { return auc_labels_.size(); }

 private:
  // What the per-sample loop needs of a table, packed together.
  struct TablePlan {
    double dup_prob;
    bool single_hot;  // a bag of exactly one id
    bool in_pair;     // has a latent vector in the label model
  };
  struct Pending {
    SampleBlock block;
    std::vector<float> probabilities;
  };

  explicit SyntheticGenerator(GeneratorOptions options);
  // Makes the next blocks, on options().threads threads.
  void Refill();
  // Appends block `index` to `out` and its probabilities to `probabilities`.
  void AppendBlock(uint64_t index, SampleBlock* out, std::vector<float>* probabilities) const;
  // Accounts for the last n samples of `out`, whose probabilities start at
  // probabilities[begin]: the position and the AUC record.
  void Record(const std::vector<float>& probabilities, size_t begin, const SampleBlock& out, size_t n);
  // Fill one block's columns, adding each feature's term to logit[i];
  // latent (count x kLatentDim) receives table t's latent means when it is
  // in a pairwise term.
  void GenerateDense(uint64_t block_key, size_t count, float* out, double* logit) const;
  void GenerateTable(size_t t, uint64_t block_key, size_t count, SampleBlock::Table* table, double* logit,
                     double* latent) const;
  // Appends a fresh bag for table t.
  void DrawBag(size_t t, Rng& rng, SampleBlock::Table* table) const;

  GeneratorOptions options_;
  DatasetSchema schema_;
  GroundTruth truth_;
  std::vector<RowSampler> rows_;
  std::vector<BagLengthSampler> bags_;
  std::vector<TablePlan> plans_;
  uint64_t block_samples_;
  uint64_t num_blocks_;

  std::vector<Pending> pending_;  // made ahead, in block order
  size_t pending_count_ = 0;
  size_t pending_index_ = 0;      // the block being read
  uint64_t pending_offset_ = 0;   // the next sample in it
  uint64_t next_block_ = 0;       // the first block not yet made
  uint64_t position_ = 0;

  std::vector<float> direct_probabilities_;  // scratch of the copy-free path
  std::vector<float> auc_scores_;
  std::vector<float> auc_labels_;
  BadRecords bad_;
};

}  // namespace actorrec::data::gen
