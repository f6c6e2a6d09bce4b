// Malformed configs: each error names the file, the line and the dotted key,
// says what was expected and what was found, and all of a file's problems
// are reported together.
#include "configs/config.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/configs/config_test_util.hpp"

using namespace actorrec::config;
using namespace actorrec::config::testing;
using Catch::Matchers::Contains;

TEST_CASE("a missing file is an error naming the file and the reason", "[configs]") {
  TempDir dir;
  std::string path = dir.path() + "/missing.toml";
  ConfigError e = LoadFailure(path);
  REQUIRE(std::string(e.what()) == path + ": cannot read the file: No such file or directory");
  REQUIRE(e.problems().size() == 1);
  REQUIRE(e.problems()[0].line == 0);
}

TEST_CASE("a directory given as the config is an error, not a crash", "[configs]") {
  TempDir dir;
  REQUIRE_THAT(LoadError(dir.path()), Contains(dir.path() + ": cannot read the file: Is a directory"));
}

TEST_CASE("a syntax error names its line and stops parsing", "[configs]") {
  TempDir dir;
  std::string text = Replace(kValid, "samples = 4096", "samples = = 4096");
  std::string path = dir.Write("bad.toml", text);
  ConfigError e = LoadFailure(path);
  REQUIRE(e.problems().size() == 1);
  REQUIRE_THAT(std::string(e.what()), Contains(At(path, text, "samples = =") + "syntax error: "));
  REQUIRE(e.problems()[0].key.empty());
}

TEST_CASE("a value of the wrong type says what was expected and what was found", "[configs]") {
  TempDir dir;
  std::string text = Replace(kValid, "embedding_dim = 16", "embedding_dim = \"sixteen\"");
  std::string path = dir.Write("bad.toml", text);
  REQUIRE_THAT(LoadError(path),
               Contains(At(path, text, "\"sixteen\"") +
                        "model.embedding_dim: expected an integer in [1, 1024]; got \"sixteen\" (a string)"));
}

TEST_CASE("a floating-point value where an integer belongs is a type error", "[configs]") {
  TempDir dir;
  std::string text = Replace(kValid, "batch_size = 512", "batch_size = 512.0");
  std::string path = dir.Write("bad.toml", text);
  REQUIRE_THAT(LoadError(path),
               Contains(At(path, text, "512.0") + "training.batch_size: expected an integer in "
                                                  "[1, 2147483647]; got 512.0 (a floating-point number)"));
}

TEST_CASE("an out-of-range value names the range and the value", "[configs]") {
  TempDir dir;
  std::string text = Replace(kValid, "embedding_dim = 16", "embedding_dim = 2000");
  text = Replace(text, "samples = 4096", "samples = 4096\nrow_scale = 1.5");
  std::string path = dir.Write("bad.toml", text);
  std::string error = LoadError(path);
  REQUIRE_THAT(error, Contains(At(path, text, "= 2000") +
                               "model.embedding_dim: expected an integer in [1, 1024]; got 2000"));
  REQUIRE_THAT(error, Contains(At(path, text, "row_scale") +
                               "dataset.row_scale: expected a finite number in (0.0, 1.0]; got 1.5"));
}

TEST_CASE("a misspelled key is unknown and the closest known key is suggested", "[configs]") {
  TempDir dir;
  std::string text = Replace(kValid, "embedding_dim = 16", "embeding_dim = 16");
  std::string path = dir.Write("bad.toml", text);
  REQUIRE_THAT(LoadError(path), Contains(At(path, text, "embeding_dim") +
                                         "model.embeding_dim: unknown key (did you mean embedding_dim?)"));
}

TEST_CASE("a key far from every known key lists the known keys instead", "[configs]") {
  TempDir dir;
  std::string text = Replace(kValid, "batch_size = 512", "batch_size = 512\ncolour = \"blue\"");
  std::string path = dir.Write("bad.toml", text);
  REQUIRE_THAT(LoadError(path), Contains(At(path, text, "colour") +
                                         "training.colour: unknown key; expected one of mode, batch_size"));
}

TEST_CASE("a misspelled table is unknown and the closest table is suggested", "[configs]") {
  TempDir dir;
  std::string text = kValid + "\n[trainng]\nepochs = 2\n";
  std::string path = dir.Write("bad.toml", text);
  REQUIRE_THAT(LoadError(path),
               Contains(At(path, text, "[trainng]") + "trainng: unknown table (did you mean training?)"));
}

TEST_CASE("an unknown enum value lists the accepted values", "[configs]") {
  TempDir dir;
  std::string text = Replace(kValid, "batch_size = 512", "batch_size = 512\nmode = \"lrp\"");
  std::string path = dir.Write("bad.toml", text);
  REQUIRE_THAT(LoadError(path),
               Contains(At(path, text, "\"lrp\"") +
                        "training.mode: expected one of lrpp_delayed, lrpp, replicated, no_cache, "
                        "static_hot, ideal; got \"lrp\""));
}

TEST_CASE("an unknown training.backend is refused naming the key and the accepted values", "[configs]") {
  TempDir dir;
  std::string text = Replace(kValid, "batch_size = 512", "batch_size = 512\nbackend = \"gpu\"");
  std::string path = dir.Write("bad.toml", text);
  REQUIRE_THAT(LoadError(path),
               Contains(At(path, text, "\"gpu\"") + "training.backend: expected one of auto, cpu, cuda; got \"gpu\""));
}

TEST_CASE("training.devices takes distinct device ordinals and refuses any other list naming the key", "[configs]") {
  TempDir dir;
  {
    std::string text = Replace(kValid, "batch_size = 512", "batch_size = 512\ndevices = [1, 0, 3]");
    CHECK(LoadConfig(dir.Write("good.toml", text)).training.devices == std::vector<int>{1, 0, 3});
    CHECK(LoadConfig(dir.Write("none.toml", kValid)).training.devices.empty());
  }
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"devices = [0, 1, 0]", "training.devices: device 0 is listed twice (entries 0 and 2)"},
      {"devices = [-1]", "training.devices"},
      {"devices = [256]", "training.devices"},
      {"devices = []", "training.devices: expected a non-empty array"},
      {"devices = 0", "training.devices: expected a non-empty array"},
      {"devices = [\"0\"]", "training.devices"},
  };
  for (const auto& [line, error] : bad) {
    std::string text = Replace(kValid, "batch_size = 512", "batch_size = 512\n" + line);
    std::string path = dir.Write("bad.toml", text);
    INFO(line);
    CHECK_THAT(LoadError(path), Contains(At(path, text, line) + error));
  }
}

TEST_CASE("a secret shorter than 16 characters is refused without echoing it", "[configs]") {
  TempDir dir;
  std::string text = Replace(kValid, "\"0123456789abcdef-test\"", "\"hunter2\"");
  std::string path = dir.Write("bad.toml", text);
  std::string error = LoadError(path);
  REQUIRE_THAT(error, Contains(At(path, text, "hunter2") +
                               "cluster.secret: expected at least 16 characters; got 7"));
  REQUIRE(error.find("hunter2") == std::string::npos);
}

TEST_CASE("secret and secret_file together are an error", "[configs]") {
  TempDir dir;
  dir.Write("cluster.secret", "0123456789abcdef-from-file\n");
  std::string text = Replace(kValid, "secret = \"0123456789abcdef-test\"",
                             "secret = \"0123456789abcdef-test\"\nsecret_file = \"cluster.secret\"");
  std::string path = dir.Write("bad.toml", text);
  REQUIRE_THAT(LoadError(path),
               Contains(At(path, text, "secret_file") + "cluster.secret_file: cluster.secret is set too (line " +
                        std::to_string(LineOf(text, "secret =")) +
                        "); set exactly one of secret and secret_file"));
}

TEST_CASE("a missing secret file is an error naming the resolved file", "[configs]") {
  TempDir dir;
  std::string text = Replace(kValid, "secret = \"0123456789abcdef-test\"",
                             "secret_file = \"nope.secret\"");
  std::string path = dir.Write("sub/bad.toml", text);
  REQUIRE_THAT(LoadError(path),
               Contains(At(path, text, "secret_file") + "cluster.secret_file: cannot read \"" +
                        dir.path() + "/sub/nope.secret\": No such file or directory"));
}

TEST_CASE("cluster.collective takes tls, gloo, nccl or auto, and an unknown one names the key", "[configs]") {
  TempDir dir;
  std::string text = Replace(kValid, "secret = \"0123456789abcdef-test\"",
                             "secret = \"0123456789abcdef-test\"\ncollective = \"mpi\"");
  std::string path = dir.Write("bad.toml", text);
  REQUIRE_THAT(LoadError(path), Contains(At(path, text, "\"mpi\"") +
                                         "cluster.collective: expected one of tls, gloo, nccl, auto; got \"mpi\""));
  REQUIRE(ParseConfig(kValid, "").cluster.collective == "tls");
  for (const char* value : {"gloo", "nccl", "auto"}) {
    REQUIRE(ParseConfig(Replace(text, "\"mpi\"", std::string("\"") + value + "\""), "").cluster.collective == value);
  }
}

TEST_CASE("a config without any secret says how to set one", "[configs]") {
  TempDir dir;
  std::string text = Replace(kValid, "secret = \"0123456789abcdef-test\"\n", "");
  std::string path = dir.Write("bad.toml", text);
  REQUIRE_THAT(LoadError(path), Contains(At(path, text, "[cluster]") +
                                         "cluster.secret: missing; set cluster.secret"));
}

TEST_CASE("a dlrm bottom MLP must end at the embedding dimension", "[configs]") {
  TempDir dir;
  std::string text = Replace(kValid, "bottom_mlp = [64, 16]", "bottom_mlp = [64, 32]");
  std::string path = dir.Write("bad.toml", text);
  REQUIRE_THAT(LoadError(path),
               Contains(At(path, text, "bottom_mlp") +
                        "model.bottom_mlp: the last size must equal model.embedding_dim (16)"));
  REQUIRE_THAT(LoadError(path), Contains("; got 32"));
}

TEST_CASE("a top MLP must end at one logit and every width is checked", "[configs]") {
  TempDir dir;
  std::string text = Replace(kValid, "top_mlp = [64, 1]", "top_mlp = [64, 2]");
  std::string path = dir.Write("bad.toml", text);
  REQUIRE_THAT(LoadError(path), Contains(At(path, text, "top_mlp") +
                                         "model.top_mlp: the last size must be 1 (the click logit); got 2"));
  text = Replace(kValid, "top_mlp = [64, 1]", "top_mlp = [0, 1]");
  path = dir.Write("bad2.toml", text);
  REQUIRE_THAT(LoadError(path), Contains(At(path, text, "top_mlp") +
                                         "model.top_mlp[0]: expected an integer in [1, 65536]; got 0"));
}

TEST_CASE("cross_layers is refused for a dlrm model", "[configs]") {
  TempDir dir;
  std::string text = Replace(kValid, "top_mlp = [64, 1]", "top_mlp = [64, 1]\ncross_layers = 3");
  std::string path = dir.Write("bad.toml", text);
  REQUIRE_THAT(LoadError(path),
               Contains(At(path, text, "cross_layers") +
                        "model.cross_layers: applies only to kind = \"dcn\"; this model is kind = "
                        "\"dlrm\"; remove it"));
}

TEST_CASE("wide_dense is refused for a dlrm model", "[configs]") {
  TempDir dir;
  std::string text = Replace(kValid, "top_mlp = [64, 1]", "top_mlp = [64, 1]\nwide_dense = true");
  std::string path = dir.Write("bad.toml", text);
  REQUIRE_THAT(LoadError(path),
               Contains(At(path, text, "wide_dense") +
                        "model.wide_dense: applies only to kind = \"wide_deep\"; this model is kind = "
                        "\"dlrm\"; remove it"));
}

TEST_CASE("the MLPs of the chosen kind are required", "[configs]") {
  TempDir dir;
  std::string text = Replace(kValid, "top_mlp = [64, 1]\n", "");
  std::string path = dir.Write("bad.toml", text);
  REQUIRE_THAT(LoadError(path), Contains(At(path, text, "[model]") +
                                         "model.top_mlp: missing; required for kind = \"dlrm\""));
}

TEST_CASE("a dlrm bottom MLP is required with dense features and refused without", "[configs]") {
  TempDir dir;
  // The default dataset has 13 dense features: the bottom MLP reads them.
  std::string text = Replace(kValid, "bottom_mlp = [64, 16]\n", "");
  std::string path = dir.Write("none.toml", text);
  REQUIRE_THAT(LoadError(path), Contains(At(path, text, "[model]") +
                                         "model.bottom_mlp: missing; required for kind = \"dlrm\" with dense "
                                         "features (dataset.dense_features = 13;"));
  // Without dense features there is no bottom MLP: the key, even [], names
  // its line and says to remove it.
  for (const char* given : {"bottom_mlp = [64, 16]", "bottom_mlp = []"}) {
    text = Replace(Replace(kValid, "bottom_mlp = [64, 16]", given), "samples = 4096",
                   "samples = 4096\ndense_features = 0");
    path = dir.Write("extra.toml", text);
    const std::string error = LoadError(path);
    INFO(error);
    REQUIRE_THAT(error, Contains(At(path, text, "bottom_mlp") +
                                 "model.bottom_mlp: applies only with dense features; dataset.dense_features = 0, "
                                 "so DLRM has no bottom MLP and its interaction pairs the embeddings alone; "
                                 "remove it"));
    REQUIRE(std::count(error.begin(), error.end(), '\n') == 0);  // one problem, not a second about []
  }
}

TEST_CASE("generated-only dataset keys are refused for file datasets", "[configs]") {
  TempDir dir;
  std::string text = Replace(kValid, "samples = 4096",
                             "source = \"criteo_tsv\"\npath = \"train.tsv\"\nsamples = 4096");
  std::string path = dir.Write("bad.toml", text);
  REQUIRE_THAT(LoadError(path), Contains(At(path, text, "samples") +
                                         "dataset.samples: applies only to source = \"generated\""));
}

TEST_CASE("a file dataset needs a path", "[configs]") {
  TempDir dir;
  std::string text = Replace(kValid, "samples = 4096", "source = \"avazu_csv\"");
  std::string path = dir.Write("bad.toml", text);
  REQUIRE_THAT(LoadError(path), Contains(At(path, text, "[dataset]") +
                                         "dataset.path: missing; required for source = \"avazu_csv\""));
}

TEST_CASE("peer timeouts shorter than three heartbeats are refused", "[configs]") {
  TempDir dir;
  std::string text = Replace(kValid, "[cluster]\n", "[cluster]\nheartbeat_ms = 500\npeer_timeout_ms = 1000\n");
  std::string path = dir.Write("bad.toml", text);
  REQUIRE_THAT(LoadError(path),
               Contains(At(path, text, "peer_timeout_ms") +
                        "cluster.peer_timeout_ms: expected at least 3 x cluster.heartbeat_ms (1500)"));
}

TEST_CASE("every problem of a file is reported, ordered by line", "[configs]") {
  TempDir dir;
  std::string text = kValid;
  text = Replace(text, "name = \"t\"", "name = \"t\"\nlog_level = \"loud\"");  // 1
  text = Replace(text, "embedding_dim = 16", "embedding_dim = 0");             // 2
  text = Replace(text, "batch_size = 512", "batch_size = 512\nepochz = 2");    // 3
  text = Replace(text, "roles = [\"all\"]", "roles = [\"al\"]");               // 4
  std::string path = dir.Write("bad.toml", text);
  ConfigError e = LoadFailure(path);
  REQUIRE(e.problems().size() == 4);
  std::string expected_keys[] = {"run.log_level", "model.embedding_dim", "training.epochz",
                                 "cluster.member[0].roles[0]"};
  for (size_t i = 0; i < 4; ++i) {
    REQUIRE(e.problems()[i].key == expected_keys[i]);
    REQUIRE(e.problems()[i].file == path);
    if (i > 0) REQUIRE(e.problems()[i - 1].line < e.problems()[i].line);
  }
  std::string what = e.what();
  REQUIRE(std::count(what.begin(), what.end(), '\n') == 3);
  REQUIRE_THAT(what, Contains(At(path, text, "epochz") + "training.epochz: unknown key (did you mean epochs?)"));
  REQUIRE_THAT(what, Contains("got \"al\" (did you mean all?)"));
}

TEST_CASE("cache_rows beyond 32-bit slot numbers and table_rows beyond 32-bit row ids are out of range", "[configs]") {
  TempDir dir;
  for (const char* rows : {"2147483648", "1000000000000000"}) {
    std::string text = Replace(kValid, "batch_size = 512", std::string("batch_size = 512\ncache_rows = ") + rows);
    std::string path = dir.Write("bad.toml", text);
    REQUIRE_THAT(LoadError(path), Contains(At(path, text, "cache_rows") +
                                           "training.cache_rows: expected an integer in [1, 2147483647]; got " + rows));
  }
  std::string text = Replace(kValid, "samples = 4096", "samples = 4096\npreset = \"custom\"\ntable_rows = [4294967296]");
  std::string path = dir.Write("bad.toml", text);
  REQUIRE_THAT(LoadError(path), Contains(At(path, text, "table_rows") + "dataset.table_rows[0]: expected an integer "
                                                                        "in [1, 4294967295]; got 4294967296"));
}

TEST_CASE("a NUL or an escape in a key or a value is shown escaped, never raw", "[configs]") {
  TempDir dir;
  std::string text = Replace(kValid, "batch_size = 512",
                             "batch_size = 512\nmode = \"lrp\\u0000\\u001b[2J\"\n\"epo\\u0000chs\" = 2");
  std::string path = dir.Write("bad.toml", text);
  const std::string error = LoadError(path);
  REQUIRE_THAT(error, Contains(At(path, text, "mode =") + "training.mode: expected one of lrpp_delayed, lrpp, "
                                                          "replicated, no_cache, static_hot, ideal; got "
                                                          "\"lrp\\x00\\x1b[2J\""));
  REQUIRE_THAT(error, Contains(At(path, text, "\"epo") + "training.epo\\x00chs: unknown key"));
  REQUIRE(error.find('\0') == std::string::npos);
  REQUIRE(error.find('\x1b') == std::string::npos);
}

TEST_CASE("a dedup group's dense features: one group, dense features and DLRM, else errors naming the key",
          "[configs][dedup]") {
  TempDir dir;
  const std::string head = "[dataset]\npreset = \"custom\"\ntable_rows = [10, 20, 30]\nsamples = 4096\n";
  auto with = [&](const std::string& dataset) { return Replace(kValid, "[dataset]\nsamples = 4096\n", head + dataset); };
  SECTION("read: the group's index") {
    const Config c = ParseConfig(with("[[dataset.dedup_groups]]\ntables = [0]\n[[dataset.dedup_groups]]\ntables = "
                                      "[1, 2]\ndense = true\n"),
                                 "ok.toml");
    CHECK(c.dataset.dense_dedup_group == 1);
    CHECK(ParseConfig(with("[[dataset.dedup_groups]]\ntables = [0]\ndense = false\n"), "ok.toml")
              .dataset.dense_dedup_group == -1);
  }
  SECTION("dense in two groups") {
    const std::string path = dir.Write("bad.toml", with("[[dataset.dedup_groups]]\ntables = [0]\ndense = true\n"
                                                        "[[dataset.dedup_groups]]\ntables = [1]\ndense = true\n"));
    REQUIRE_THAT(LoadError(path), Contains("dataset.dedup_groups[1].dense: the dense features are already in "
                                           "dataset.dedup_groups[0]"));
  }
  SECTION("no dense features") {
    std::string text = with("dense_features = 0\n[[dataset.dedup_groups]]\ntables = [0, 1]\ndense = true\n");
    text = Replace(text, "bottom_mlp = [64, 16]\n", "");
    const std::string path = dir.Write("bad.toml", text);
    REQUIRE_THAT(LoadError(path), Contains("dataset.dedup_groups[0].dense: the dataset has no dense features"));
  }
  SECTION("a model other than DLRM") {
    std::string text = with("[[dataset.dedup_groups]]\ntables = [0, 1]\ndense = true\n");
    text = Replace(text, "kind = \"dlrm\"\nembedding_dim = 16\nbottom_mlp = [64, 16]\ntop_mlp = [64, 1]",
                   "kind = \"wide_deep\"\nembedding_dim = 16\ndeep_mlp = [64, 1]");
    const std::string path = dir.Write("bad.toml", text);
    REQUIRE_THAT(LoadError(path), Contains("dataset.dedup_groups[0].dense: only model.kind = \"dlrm\" computes per "
                                           "distinct tuple"));
  }
}

TEST_CASE("dedup groups naming an unknown table, or a table twice, are errors naming the key", "[configs][dedup]") {
  TempDir dir;
  const std::string groups = "[dataset]\npreset = \"custom\"\ntable_rows = [10, 20, 30]\nsamples = 4096\n"
                             "[[dataset.dedup_groups]]\ntables = [0, 1]\n[[dataset.dedup_groups]]\ntables = ";
  auto with = [&](const std::string& second) {
    return Replace(kValid, "[dataset]\nsamples = 4096\n", groups + second + "\n");
  };
  SECTION("a valid grouping is read, each group ascending") {
    const Config c = ParseConfig(with("[2]"), "ok.toml");
    REQUIRE(c.dataset.dedup_groups == std::vector<std::vector<uint32_t>>{{0, 1}, {2}});
  }
  SECTION("an unknown table") {
    std::string text = with("[2, 3]");
    std::string path = dir.Write("bad.toml", text);
    REQUIRE_THAT(LoadError(path), Contains("dataset.dedup_groups[1].tables: table 3 does not exist: the dataset has "
                                           "3 tables, 0 to 2"));
  }
  SECTION("a table in two groups") {
    std::string text = with("[2, 1]");
    std::string path = dir.Write("bad.toml", text);
    REQUIRE_THAT(LoadError(path), Contains("dataset.dedup_groups[1].tables: table 1 is already in "
                                           "dataset.dedup_groups[0]"));
  }
  SECTION("a group without tables, or with a negative one") {
    std::string text = with("[-1]");
    std::string path = dir.Write("bad.toml", text);
    REQUIRE_THAT(LoadError(path), Contains("dataset.dedup_groups[1].tables[0]: expected an integer"));
    text = Replace(kValid, "[dataset]\nsamples = 4096\n", "[dataset]\nsamples = 4096\n[[dataset.dedup_groups]]\n");
    path = dir.Write("bad2.toml", text);
    REQUIRE_THAT(LoadError(path), Contains("dataset.dedup_groups[0].tables: missing"));
  }
}

// [[model.crosses]] (Wide&Deep's crossed columns): each problem names the
// cross's key and line; the tables are those of a custom generated dataset.
TEST_CASE("crosses are validated: kind, tables, their count and repeats, buckets", "[configs]") {
  TempDir dir;
  const std::string wide = Replace(Replace(kValid, "bottom_mlp = [64, 16]\ntop_mlp = [64, 1]\n",
                                           "deep_mlp = [64, 1]\n"),
                                   "kind = \"dlrm\"", "kind = \"wide_deep\"");
  const std::string custom = Replace(wide, "samples = 4096", "samples = 4096\npreset = \"custom\"\ntable_rows = [10, 20, 30]");
  auto with = [&](const std::string& base, const std::string& crosses) {
    return Replace(base, "deep_mlp = [64, 1]\n", "deep_mlp = [64, 1]\n" + crosses);
  };
  {  // A valid pair of crosses loads, in order.
    const Config c = LoadConfig(dir.Write("ok.toml", with(custom, "[[model.crosses]]\ntables = [2, 0]\nbuckets = 1000\n"
                                                                  "[[model.crosses]]\ntables = [0, 1, 2]\nbuckets = 7\n")));
    REQUIRE(c.model.crosses.size() == 2);
    CHECK(c.model.crosses[0].tables == std::vector<uint32_t>{2, 0});
    CHECK(c.model.crosses[0].buckets == 1000);
    CHECK(c.model.crosses[1].tables == std::vector<uint32_t>{0, 1, 2});
  }
  struct Bad {
    std::string crosses, needle, message;
  };
  const Bad bad[] = {
      {"[[model.crosses]]\ntables = [0, 3]\nbuckets = 100\n", "tables = [0, 3]",
       "model.crosses[0].tables: table 3 does not exist: the dataset has 3 tables, 0 to 2"},
      {"[[model.crosses]]\ntables = [1]\nbuckets = 100\n", "tables = [1]",
       "model.crosses[0].tables: expected at least two tables to cross; got 1"},
      {"[[model.crosses]]\ntables = [1, 1]\nbuckets = 100\n", "tables = [1, 1]",
       "model.crosses[0].tables: table 1 is listed twice"},
      {"[[model.crosses]]\ntables = [0, 1]\nbuckets = 1\n", "buckets = 1",
       "model.crosses[0].buckets: expected an integer in [2, 4294967295]; got 1"},
      {"[[model.crosses]]\ntables = [0, 1]\nbuckets = 4294967296\n", "buckets = 4294967296",
       "model.crosses[0].buckets: expected an integer in [2, 4294967295]; got 4294967296"},
      {"[[model.crosses]]\ntables = [0, 1]\n", "[[model.crosses]]", "model.crosses[0].buckets: missing"},
      {"[[model.crosses]]\nbuckets = 10\n", "[[model.crosses]]", "model.crosses[0].tables: missing"},
      {"[[model.crosses]]\ntables = [0, 1]\nbuckets = 10\n[[model.crosses]]\ntables = [0, 1]\nbuckets = 20\n",
       "buckets = 20", "model.crosses[1].tables: the same tables as model.crosses[0]"},
      {"[[model.crosses]]\ntables = [0, 1]\nbucket = 10\n", "bucket = 10", "model.crosses[0].bucket: unknown key"},
  };
  for (const Bad& b : bad) {
    const std::string text = with(custom, b.crosses);
    const std::string path = dir.Write("bad.toml", text);
    INFO(b.crosses);
    const std::string error = LoadError(path);
    // Missing keys are reported at the table's line, the others at theirs.
    const std::string needle = b.needle == "buckets = 20" ? "tables = [0, 1]\nbuckets = 20" : b.needle;
    CHECK_THAT(error, Contains(At(path, text, needle) + b.message));
  }
  // Only Wide&Deep has a wide part.
  const std::string dlrm = Replace(kValid, "top_mlp = [64, 1]\n", "top_mlp = [64, 1]\n[[model.crosses]]\ntables = [0, 1]\nbuckets = 10\n");
  const std::string path = dir.Write("dlrm.toml", dlrm);
  CHECK_THAT(LoadError(path), Contains("model.crosses: applies only to kind = \"wide_deep\" (crossed columns of its "
                                       "wide part); this model is kind = \"dlrm\"; remove it"));
}
