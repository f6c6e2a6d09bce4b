// The config's sizes against the machine's memory; see memory_check.hpp.
#include "configs/memory_check.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string_view>
#include <vector>

#include "base/byte_units.hpp"
#include "configs/row_state.hpp"
#include "configs/toml_reader.hpp"

namespace actorrec::config {

namespace {

// Products saturate: a key of 10^15 times a row must not wrap to a small
// number of bytes.
uint64_t Mul(uint64_t a, uint64_t b) {
  uint64_t out;
  return __builtin_mul_overflow(a, b, &out) ? UINT64_MAX : out;
}
uint64_t Add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

// One allocation that grows with a key, on one member.
struct Need {
  TableReader* table;
  std::string_view key;
  uint64_t bytes = 0;
  std::string how;  // "2 trainers x 65536 slots x 128 bytes a row"
};

// Weights of an MLP from `input` features through `widths`, biases aside.
uint64_t MlpWeights(uint64_t input, const std::vector<int>& widths) {
  uint64_t weights = 0;
  for (int w : widths) {
    weights = Add(weights, Mul(input, static_cast<uint64_t>(w)));
    input = static_cast<uint64_t>(w);
  }
  return weights;
}

// The MLPs' weights and the key of the largest, from what the config says
// (an input the data decides counts at its smallest: one table).
std::pair<uint64_t, std::string_view> DenseWeights(const Config& c) {
  const uint64_t dense = static_cast<uint64_t>(c.dataset.dense_features);
  const uint64_t dim = static_cast<uint64_t>(c.model.embedding_dim);
  std::pair<uint64_t, std::string_view> most{0, "embedding_dim"};
  uint64_t total = 0;
  auto add = [&](std::string_view key, uint64_t weights) {
    total = Add(total, weights);
    if (weights > most.first) most = {weights, key};
  };
  if (c.model.kind == ModelKind::kDlrm) {
    add("bottom_mlp", MlpWeights(dense, c.model.bottom_mlp));
    // The interaction at one table is z alone (dim floats); without dense
    // features, at two tables, their one pair.
    add("top_mlp", MlpWeights(dense > 0 ? dim : 1, c.model.top_mlp));
  } else {
    add("deep_mlp", MlpWeights(dense + dim, c.model.deep_mlp));
  }
  return {total, most.second};
}

uint64_t SumOfWidths(const ModelConfig& m) {
  uint64_t sum = 0;
  for (const auto* mlp : {&m.bottom_mlp, &m.top_mlp, &m.deep_mlp}) {
    for (int w : *mlp) sum += static_cast<uint64_t>(w);
  }
  return sum;
}

std::string Trainers(int n) { return std::to_string(n) + (n == 1 ? " trainer" : " trainers"); }

}  // namespace

MemoryBudget MachineMemory() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  MemoryBudget budget;
  budget.bytes = pages > 0 && page > 0 ? Mul(static_cast<uint64_t>(pages), static_cast<uint64_t>(page)) : UINT64_MAX;
  budget.source = "this machine's " + DecimalBytes(static_cast<double>(budget.bytes));
  // cgroup v2: "max" or a byte count.
  std::ifstream limit_file("/sys/fs/cgroup/memory.max");
  uint64_t limit = 0;
  if (limit_file >> limit && limit > 0 && limit < budget.bytes) {
    budget.bytes = limit;
    budget.source = "the " + DecimalBytes(static_cast<double>(limit)) + " limit of this process's cgroup";
  }
  return budget;
}

void CheckMemory(const Config& c, const MemoryKeys& keys, const MemoryBudget& budget) {
  const TrainingConfig& tr = c.training;
  const uint64_t dim = static_cast<uint64_t>(c.model.embedding_dim);
  const uint64_t row_bytes = (dim + RowStateFloats(c.optimizer.sparse, static_cast<uint32_t>(dim))) * sizeof(float);
  // The modes with a cache of training.cache_rows slots; ideal's cache holds
  // every row of the data, which the config does not know.
  const uint64_t slots = tr.mode == Mode::kIdeal       ? 0
                         : tr.mode == Mode::kStaticHot ? 2 * tr.cache_rows
                                                       : tr.cache_rows;
  const auto [weights, widest_mlp] = DenseWeights(c);
  const uint64_t dense = static_cast<uint64_t>(c.dataset.dense_features);
  const uint64_t sample_bytes = (SumOfWidths(c.model) + dense + 1) * sizeof(float);
  const uint64_t batch = static_cast<uint64_t>(tr.batch_size);
  const uint64_t tables = std::max<size_t>(1, c.dataset.table_rows.size());
  const int all_trainers = c.cluster.TotalTrainers();
  const bool several = c.cluster.members.size() > 1;

  for (const Member& m : c.cluster.members) {
    const std::string on = several ? " on member \"" + m.name + "\"" : "";
    std::vector<Need> needs;
    if (m.trainers > 0 && slots > 0) {
      needs.push_back({keys.training, "cache_rows", Mul(Mul(m.trainers, slots), row_bytes),
                       Trainers(m.trainers) + " x " + std::to_string(slots) + " slots x " + std::to_string(row_bytes) +
                           " bytes a row (model.embedding_dim and the sparse optimizer's state)"});
    }
    if (m.trainers > 0) {
      // Each trainer keeps its replica of the weights and their gradient.
      needs.push_back({keys.model, widest_mlp, Mul(Mul(m.trainers, weights), 2 * sizeof(float)),
                       Trainers(m.trainers) + " x " + std::to_string(weights) +
                           " MLP weights x 8 bytes (the weight and its gradient)"});
      // The trainers' share of a batch, each sample with every layer's output.
      const uint64_t samples = batch * static_cast<uint64_t>(m.trainers) / static_cast<uint64_t>(all_trainers);
      needs.push_back({keys.training, "batch_size", Mul(samples, sample_bytes),
                       std::to_string(samples) + " samples x " + std::to_string(sample_bytes) +
                           " bytes (dense features and every MLP layer's output)"});
    }
    if (m.Has(Role::kOracle) && tr.lookahead > 0) {
      needs.push_back({keys.training, "lookahead", Mul(Mul(tr.lookahead, batch), Mul(tables, sizeof(uint32_t))),
                       std::to_string(tr.lookahead) + " batches x " + std::to_string(batch) + " samples x " +
                           std::to_string(tables) + (tables == 1 ? " table" : " tables") +
                           " x 4 bytes a row id in the oracle's window"});
    }
    if (m.name == c.cluster.coordinator && c.dataset.eval_samples > 0) {
      needs.push_back({keys.dataset, "eval_samples", Mul(c.dataset.eval_samples, 2 * sizeof(float)),
                       std::to_string(c.dataset.eval_samples) + " held-out samples x 8 bytes (score and label, "
                                                                "kept for the exact AUC)"});
    }

    const std::string beyond = ", more than " + budget.source + " of memory";
    uint64_t total = 0;
    bool reported = false;
    for (const Need& n : needs) {
      total = Add(total, n.bytes);
      if (n.bytes <= budget.bytes) continue;
      n.table->Fail(n.key, "needs at least " + DecimalBytes(static_cast<double>(n.bytes)) + on + " (" + n.how + ")" +
                               beyond + "; lower it");
      reported = true;
    }
    if (!reported && total > budget.bytes) {
      const Need& most = *std::max_element(needs.begin(), needs.end(),
                                           [](const Need& a, const Need& b) { return a.bytes < b.bytes; });
      std::string parts;
      for (const Need& n : needs) {
        parts += (parts.empty() ? "" : ", ") + n.table->KeyPath(n.key) + " " + DecimalBytes(static_cast<double>(n.bytes));
      }
      most.table->Fail(most.key, "the run needs at least " + DecimalBytes(static_cast<double>(total)) + on + " (" +
                                     parts + ")" + beyond + "; lower this, the largest");
    }
  }
}

}  // namespace actorrec::config
