// Presets and validation of generator options.
#include "data/gen/generator_options.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace actorrec::data::gen {

AccessDistribution AccessDistribution::Zipf(double alpha) {
  AccessDistribution d;
  d.kind = Kind::kZipf;
  d.alpha = alpha;
  return d;
}

AccessDistribution AccessDistribution::TopShare(double hot_fraction, double hot_share) {
  AccessDistribution d;
  d.kind = Kind::kTopShare;
  d.hot_fraction = hot_fraction;
  d.hot_share = hot_share;
  return d;
}

AccessDistribution AccessDistribution::HalfNormal(double sigma) {
  AccessDistribution d;
  d.kind = Kind::kHalfNormal;
  d.sigma = sigma;
  return d;
}

AccessDistribution AccessDistribution::Exponential(double lambda) {
  AccessDistribution d;
  d.kind = Kind::kExponential;
  d.lambda = lambda;
  return d;
}

std::vector<double> GeneratorOptions::SessionDupProbs() const {
  std::vector<double> d;
  for (const auto& t : tables) d.push_back(t.session_dup_prob);
  return d;
}

const std::vector<uint64_t>& CriteoKaggleRows() {
  static const std::vector<uint64_t> kRows = {
      1460, 583,  10131227, 2202608, 305,     24,    12517, 633, 3,      93145, 5683,   8351593, 3194,
      27,   14992, 5461306, 10,      5652,    2173,  4,     7046547, 18, 15,    286181, 105,     142572};
  return kRows;
}

GeneratorOptions CriteoKaggleOptions(double row_scale) {
  GeneratorOptions o;
  o.samples = 45'840'617;
  o.num_dense = 13;
  const auto& rows = CriteoKaggleRows();
  for (size_t t = 0; t < rows.size(); ++t) {
    TableOptions table;
    table.name = "C";
    table.name += std::to_string(t + 1);  // not "C" + ...: GCC 12 warns falsely (-Wrestrict)
    table.rows = std::max<uint64_t>(2, static_cast<uint64_t>(std::llround(static_cast<double>(rows[t]) * row_scale)));
    table.access = AccessDistribution::Zipf(1.05);
    o.tables.push_back(table);
  }
  return o;
}

namespace {

Status Bad(const std::string& what) { return Status::InvalidArgument("generator options: " + what); }

bool InUnit(double x) { return x >= 0.0 && x <= 1.0; }

Status ValidateTable(const TableOptions& t) {
  const std::string where = "table '" + t.name + "': ";
  if (t.rows < 1 || t.rows > (uint64_t{1} << 32)) return Bad(where + "rows must be in [1, 2^32]");
  const AccessDistribution& a = t.access;
  using K = AccessDistribution::Kind;
  if (a.kind == K::kZipf && !(a.alpha > 0.0)) return Bad(where + "Zipf alpha must be > 0");
  if (a.kind == K::kTopShare && !(a.hot_fraction > 0.0 && a.hot_fraction <= 1.0 && InUnit(a.hot_share)))
    return Bad(where + "top-share needs hot_fraction in (0, 1] and hot_share in [0, 1]");
  // Beyond sigma = 10 the truncation rejects over 90 % of draws; use uniform instead.
  if (a.kind == K::kHalfNormal && !(a.sigma > 0.0 && a.sigma <= 10.0)) return Bad(where + "half-normal sigma must be in (0, 10]");
  if (a.kind == K::kExponential && !(a.lambda > 0.0)) return Bad(where + "exponential lambda must be > 0");
  const BagLength& b = t.bag;
  using L = BagLength::Kind;
  if (b.kind == L::kUniform && b.min > b.max) return Bad(where + "bag length min > max");
  // Bags are bounded so that a read of 64 Ki samples stays within a block's
  // 32-bit offsets (SampleBlock).
  if (b.kind == L::kGeometric && !(b.mean >= 1.0 && b.mean <= 1e4)) return Bad(where + "geometric bag mean must be in [1, 1e4]");
  // Poisson is drawn by sequential inversion, O(mean) per draw, from exp(-mean),
  // which must not underflow.
  if (b.kind == L::kPoisson && !(b.mean >= 0.0 && b.mean <= 500.0)) return Bad(where + "Poisson bag mean must be in [0, 500]");
  if ((b.kind == L::kFixed || b.kind == L::kUniform) && b.max > 10'000) return Bad(where + "bag length above 1e4");
  if (!InUnit(t.session_dup_prob)) return Bad(where + "session_dup_prob must be in [0, 1]");
  return Status::Ok();
}

}  // namespace

Status Validate(const GeneratorOptions& options) {
  if (options.session_length < 1) return Bad("session_length must be >= 1");
  if (options.session_length > 1'000'000) return Bad("session_length above 1e6");
  if (!(options.base_ctr > 0.0 && options.base_ctr < 1.0)) return Bad("base_ctr must be in (0, 1)");
  if (!(options.signal >= 0.0 && options.signal <= 100.0)) return Bad("signal must be in [0, 100]");
  if (options.threads < 1 || options.threads > 1024) return Bad("threads must be in [1, 1024]");
  if (options.num_dense > 100'000) return Bad("num_dense above 1e5");
  for (const auto& t : options.tables) {
    Status s = ValidateTable(t);
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

DatasetSchema SchemaOf(const GeneratorOptions& options) {
  DatasetSchema schema;
  for (uint32_t j = 0; j < options.num_dense; ++j) {
    std::string name = "I";
    name += std::to_string(j + 1);
    schema.dense_names.push_back(std::move(name));
  }
  for (const auto& t : options.tables) schema.tables.push_back({t.name, t.rows});
  return schema;
}

}  // namespace actorrec::data::gen
