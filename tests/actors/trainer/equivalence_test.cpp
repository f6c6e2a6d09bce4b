// The promise (ARCHITECTURE §3): every cache mode, any L and any number of
// trainers end with parameters bitwise equal to the no_cache run of the
// same config and W. Parameters are compared by a digest of the dense bytes
// of every replica (which must agree) and of every shard's rows.
#include <catch2/catch.hpp>

#include <map>
#include <sstream>
#include <string>

#include "tests/actors/trainer/lockstep_digest.hpp"

namespace actorrec::trainer {
namespace {

const char* kCachedModes[] = {"lrpp_delayed", "lrpp", "replicated"};
const char* kDirectModes[] = {"static_hot", "ideal"};

}  // namespace

TEST_CASE("every mode, model, L and W equals the no_cache run bitwise", "[trainer][equivalence]") {
  for (const char* model : {"dlrm", "wide_deep", "deepfm", "dcn"}) {
    for (int w : {1, 2, 4}) {
      Case c;
      c.model = model;
      c.trainers = w;
      c.sparse = "adagrad";
      const uint64_t reference = LockstepDigest(c);
      for (const char* mode : kDirectModes) {
        c.mode = mode;
        // static_hot: a small hot set, most rows fetched (hot rows + one
        // batch's staging within training.cache_rows).
        c.cache_rows = 512;
        INFO(model << " W=" << w << " " << mode);
        CHECK(LockstepDigest(c) == reference);
      }
      c.cache_rows = 8192;
      for (const char* mode : kCachedModes) {
        for (int l : {1, 3, 20}) {
          c.mode = mode;
          c.lookahead = l;
          INFO(model << " W=" << w << " " << mode << " L=" << l);
          CHECK(LockstepDigest(c) == reference);
        }
      }
    }
  }
}

TEST_CASE("every optimizer pair and mean pooling keep the modes bitwise equal", "[trainer][equivalence]") {
  for (const char* dense : {"sgd", "adagrad", "adam"}) {
    for (const char* sparse : {"sgd", "adagrad", "rowwise_adagrad", "adam"}) {
      Case c;
      c.dense = dense;
      c.sparse = sparse;
      c.pooling = std::string(sparse) == "adam" ? "mean" : "sum";
      c.trainers = 2;
      const uint64_t reference = LockstepDigest(c);
      for (const char* mode : {"lrpp_delayed", "replicated", "ideal", "static_hot"}) {
        c.mode = mode;
        INFO(dense << "/" << sparse << " " << mode);
        CHECK(LockstepDigest(c) == reference);
      }
    }
  }
}

TEST_CASE("a tight cache with an automatic L stays bitwise equal", "[trainer][equivalence]") {
  struct Tight {
    uint64_t seed;
    int trainers;
    const char* skew;
    int batches;
    uint64_t cache_rows;
    bool ends_window;
  };
  // The last: L is chosen from the first 130 of 300 batches (7 for 420
  // slots), and a later batch needs more slots than they did, so the oracle
  // ends the window there and goes on with the L that fits the rest (6).
  // Before, the run stopped at that batch.
  for (const Tight& t : {Tight{1, 2, "uniform", 10, 700, false}, Tight{2, 2, "uniform", 10, 700, false},
                         Tight{3, 2, "uniform", 10, 700, false}, Tight{7, 4, "zipf", 300, 420, true}}) {
    Case c;
    c.seed = t.seed;
    c.trainers = t.trainers;
    c.skew = t.skew;
    c.batches = t.batches;
    const uint64_t reference = LockstepDigest(c);
    c.mode = "lrpp_delayed";
    c.lookahead = 0;
    c.cache_rows = t.cache_rows;
    INFO("seed " << t.seed);
    std::string report;
    CHECK(LockstepDigest(c, &report) == reference);
    CHECK((report.find("ended the window") != std::string::npos) == t.ends_window);
  }
}

TEST_CASE("the digest sees the parameters: a different seed or one batch less differs", "[trainer][equivalence]") {
  Case c;
  const uint64_t base = LockstepDigest(c);
  Case other_seed = c;
  other_seed.seed = c.seed + 1;
  CHECK(LockstepDigest(other_seed) != base);
  Case fewer = c;
  fewer.batches = c.batches - 1;
  CHECK(LockstepDigest(fewer) != base);
}

}  // namespace actorrec::trainer
