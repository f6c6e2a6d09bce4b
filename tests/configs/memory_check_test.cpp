// Sizes that could not fit the machine's memory are config errors naming
// the key, what it needs and what the machine has (configs/memory_check.hpp),
// checked here against a budget the test chooses.
#include "configs/memory_check.hpp"

#include <catch2/catch.hpp>

#include "tests/configs/config_test_util.hpp"

using namespace actorrec::config;
using namespace actorrec::config::testing;
using Catch::Matchers::Contains;

namespace {

const MemoryBudget kOneGb{1'000'000'000, "a test's 1.0 GB"};
const std::string kPath = "/cfg/bad.toml";

// The message of parsing `text` against `budget`; fails the test when it parses.
std::string ParseError(const std::string& text, const MemoryBudget& budget = kOneGb) {
  try {
    ParseConfig(text, kPath, budget);
  } catch (const ConfigError& e) {
    return e.what();
  }
  FAIL("expected a ConfigError");
  return "";
}

}  // namespace

TEST_CASE("the machine's memory is found and is not nothing", "[configs]") {
  const MemoryBudget machine = MachineMemory();
  REQUIRE(machine.bytes > 0);
  REQUIRE_THAT(machine.source, Contains(" GB") || Contains(" MB"));
}

TEST_CASE("a config whose sizes fit loads against a small budget", "[configs]") {
  REQUIRE_NOTHROW(ParseConfig(kValid, kPath, kOneGb));
}

TEST_CASE("a cache that cannot fit names cache_rows, the memory it needs and the memory there is", "[configs]") {
  std::string text = Replace(kValid, "batch_size = 512", "batch_size = 512\ncache_rows = 16777216");
  REQUIRE(ParseError(text) == At(kPath, text, "cache_rows") +
                                  "training.cache_rows: needs at least 2.1 GB (2 trainers x 16777216 slots x 64 bytes "
                                  "a row (model.embedding_dim and the sparse optimizer's state)), more than a test's "
                                  "1.0 GB of memory; lower it");
  // Adam keeps two floats per weight and a step count in the row.
  text = Replace(text, "[dataset]", "[optimizer]\nsparse = \"adam\"\n\n[dataset]");
  REQUIRE_THAT(ParseError(text), Contains("needs at least 6.6 GB (2 trainers x 16777216 slots x 196 bytes a row"));
}

TEST_CASE("batch_size, lookahead, MLP widths and eval_samples are each checked against memory", "[configs]") {
  SECTION("batch_size") {
    std::string text = Replace(kValid, "batch_size = 512", "batch_size = 1073741824");
    REQUIRE_THAT(ParseError(text), Contains(At(kPath, text, "batch_size") +
                                            "training.batch_size: needs at least 682.9 GB (1073741824 samples x "
                                            "636 bytes (dense features and every MLP layer's output))"));
  }
  SECTION("lookahead") {
    std::string text = Replace(kValid, "batch_size = 512", "batch_size = 65536\nlookahead = 100000");
    REQUIRE_THAT(ParseError(text), Contains(At(kPath, text, "lookahead") +
                                            "training.lookahead: needs at least 26.2 GB (100000 batches x 65536 "
                                            "samples x 1 table x 4 bytes a row id in the oracle's window)"));
  }
  SECTION("MLP widths") {
    std::string text = Replace(kValid, "top_mlp = [64, 1]", "top_mlp = [65536, 65536, 1]");
    REQUIRE_THAT(ParseError(text), Contains(At(kPath, text, "top_mlp") + "model.top_mlp: needs at least 68.7 GB "
                                                                         "(2 trainers x 4296083264 MLP weights"));
  }
  SECTION("eval_samples") {
    std::string text = Replace(kValid, "samples = 4096", "samples = 4096\neval_samples = 1000000000000000");
    REQUIRE_THAT(ParseError(text), Contains(At(kPath, text, "eval_samples") +
                                            "dataset.eval_samples: needs at least 8000.0 TB"));
  }
}

TEST_CASE("sizes that fit alone but not together name the largest", "[configs]") {
  // 67.1 MB of cache and 40 MB of held-out scores against 100 MB.
  std::string text = Replace(kValid, "batch_size = 512", "batch_size = 512\ncache_rows = 524288");
  text = Replace(text, "samples = 4096", "samples = 4096\neval_samples = 5000000");
  const std::string error = ParseError(text, {100'000'000, "a test's 100.0 MB"});
  REQUIRE_THAT(error, Contains(At(kPath, text, "cache_rows") + "training.cache_rows: the run needs at least 107."));
  REQUIRE_THAT(error, Contains("training.cache_rows 67.1 MB, "));
  REQUIRE_THAT(error, Contains("dataset.eval_samples 40.0 MB), more than a test's 100.0 MB of memory"));
}

TEST_CASE("in a cluster, the member that could not hold its share is named", "[configs]") {
  std::string text = Replace(kHead, "batch_size = 512", "batch_size = 512\ncache_rows = 16777216") + kTwoMembers;
  REQUIRE_THAT(ParseError(text), Contains("training.cache_rows: needs at least 2.1 GB on member \"b\" (2 trainers"));
}
