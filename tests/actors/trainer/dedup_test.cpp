// Deduplicated feature groups (dataset.dedup_groups, RecD's IKJT) through
// the trainer: with dedup on, every cache mode equals no_cache with dedup on
// bitwise (the promise of ARCHITECTURE §3 holds for the dedup'd compute);
// against dedup off only the order of the gradient sums differs: the first
// batch's forward (its loss) is bitwise the same, and the parameters after
// training differ by rounding alone.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <span>

#include "tests/actors/trainer/lockstep_digest.hpp"

namespace actorrec::trainer {
namespace {

// Sessions of 8 in which tables 0 and 1 (the "user" side) nearly always
// repeat and table 2 often: grouped, they dedup about 4x per slice.
Case SessionCase() {
  Case c;
  c.session_length = 8;
  c.session_dup = "[0.95, 0.95, 0.6, 0.0]";
  c.dedup_groups = {"[0, 1]", "[2]"};
  c.sparse = "adagrad";
  return c;
}

struct Trained {
  std::unique_ptr<LockstepRun> run;
  double first_loss = 0;
};

Trained Train(const Case& c) {
  const config::Config cfg = config::ParseConfig(ConfigText(c), "dedup.toml");
  auto run = LockstepRun::Create(cfg);
  INFO(run.status().message());
  REQUIRE(run.ok());
  Trained out;
  StepReport step;
  for (int b = 0;; ++b) {
    auto more = (*run)->Step(&step);
    INFO(more.status().message());
    REQUIRE(more.ok());
    if (!*more) break;
    if (b == 0) out.first_loss = step.loss_sum;
  }
  REQUIRE((*run)->Finish().ok());
  out.run = std::move(run).value();
  return out;
}

}  // namespace

// The largest |a_i − b_i| / max(|a_i|, |b_i|, 1e-3) over two parameter
// vectors of one shape: rounding apart is ~1e-7, a different computation far more.
double MaxRelativeDifference(std::span<const float> a, std::span<const float> b) {
  REQUIRE(a.size() == b.size());
  double max_rel = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double scale = std::max({std::fabs(double(a[i])), std::fabs(double(b[i])), 1e-3});
    max_rel = std::max(max_rel, std::fabs(double(a[i]) - double(b[i])) / scale);
  }
  return max_rel;
}

TEST_CASE("with dedup groups every mode, model and W equals no_cache with dedup bitwise",
          "[trainer][equivalence][dedup]") {
  for (const char* model : {"dlrm", "wide_deep"}) {
    for (const char* pooling : {"sum", "mean"}) {
      for (int w : {1, 2}) {
        Case c = SessionCase();
        c.model = model;
        c.pooling = pooling;
        c.trainers = w;
        CheckEveryModeEqualsNoCache(c, std::string(model) + " " + pooling + " W=" + std::to_string(w));
      }
    }
  }
}

TEST_CASE("dedup on and off differ only in the order of the gradient sums", "[trainer][dedup]") {
  for (int w : {1, 2}) {
    Case on = SessionCase();
    on.trainers = w;
    on.mode = "lrpp_delayed";
    Case off = on;
    off.dedup_groups.clear();
    Trained a = Train(on), b = Train(off);
    INFO("W=" << w);
    // The forward pools the same bags in the same order: bitwise equal.
    CHECK(a.first_loss == b.first_loss);
    // The parameters: rounding apart, not a different computation.
    const double max_rel = MaxRelativeDifference(a.run->dense_params(0), b.run->dense_params(0));
    WARN("W=" << w << ": dense parameters, max relative difference dedup on vs off " << max_rel);
    CHECK(max_rel < 1e-4);
    auto ea = a.run->Evaluate(0), eb = b.run->Evaluate(0);
    REQUIRE(ea.ok());
    REQUIRE(eb.ok());
    CHECK(ea->auc == Approx(eb->auc).margin(1e-3));
  }
}

TEST_CASE("one group of every table (whole tuples repeat) stays bitwise equal across modes", "[trainer][dedup]") {
  Case c = SessionCase();
  c.session_dup = "0.9";
  c.dedup_groups = {"[0, 1, 2, 3]"};
  c.trainers = 2;
  const uint64_t reference = LockstepDigest(c);
  c.mode = "lrpp_delayed";
  CHECK(LockstepDigest(c) == reference);
}

// A group with the dense features too: sessions keep their user's dense
// row (session_dense_dup), so DLRM's bottom MLP runs per distinct (tuple,
// dense row), about one per session.
Case DenseCase() {
  Case c = SessionCase();
  c.session_dense_dup = 0.9;
  c.dedup_groups = {"[0, 1]\ndense = true", "[2]"};
  return c;
}

TEST_CASE("with the dense features in a dedup group every mode and W equals no_cache bitwise",
          "[trainer][equivalence][dedup]") {
  for (const char* pooling : {"sum", "mean"}) {
    for (int w : {1, 2}) {
      Case c = DenseCase();
      c.pooling = pooling;
      c.trainers = w;
      CheckEveryModeEqualsNoCache(c, std::string("dense dedup ") + pooling + " W=" + std::to_string(w));
    }
  }
}

TEST_CASE("the bottom MLP per distinct dense row differs from per sample only in the order of sums",
          "[trainer][dedup]") {
  for (int w : {1, 2}) {
    Case on = DenseCase();
    on.trainers = w;
    on.mode = "lrpp_delayed";
    Case off = on;
    off.dedup_groups = {"[0, 1]", "[2]"};  // the same groups, the dense rows per sample
    Trained a = Train(on), b = Train(off);
    INFO("W=" << w);
    CHECK(a.first_loss == Approx(b.first_loss).epsilon(1e-6));
    const double max_rel = MaxRelativeDifference(a.run->dense_params(0), b.run->dense_params(0));
    WARN("W=" << w << ": dense parameters, max relative difference dense dedup on vs off " << max_rel);
    CHECK(max_rel < 1e-4);
    // A different computation would not stay this close; and this one is
    // different (sums per distinct row first), so the bits differ.
    CHECK(a.run->ParameterDigest() != b.run->ParameterDigest());
    auto ea = a.run->Evaluate(0), eb = b.run->Evaluate(0);
    REQUIRE(ea.ok());
    REQUIRE(eb.ok());
    CHECK(ea->auc == Approx(eb->auc).margin(1e-3));
  }
}

}  // namespace actorrec::trainer
