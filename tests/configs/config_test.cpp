// The shipped configs and the embedded default load, with the values they
// promise; defaults, derived fields and path resolution of valid files.
#include "configs/config.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "base/digest.hpp"
#include "tests/configs/config_test_util.hpp"

using namespace actorrec::config;
using namespace actorrec::config::testing;

namespace {

std::string SourcePath(const std::string& relative) {
  return std::string(ACTORREC_SOURCE_DIR) + "/" + relative;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace

TEST_CASE("the embedded default is configs/local.toml byte for byte", "[configs]") {
  std::string file = ReadAll(SourcePath("configs/local.toml"));
  REQUIRE_FALSE(file.empty());
  REQUIRE(EmbeddedLocalToml() == file);
}

TEST_CASE("the embedded default loads as one process with every role", "[configs]") {
  Config c = LoadEmbeddedLocal();
  REQUIRE(c.path == "<embedded local.toml>");
  REQUIRE(c.digest == actorrec::Digest64Hex(EmbeddedLocalToml()));
  REQUIRE(c.run.name == "local");
  REQUIRE(c.run.seed == 42);
  REQUIRE(c.run.output_dir == "runs/local");
  REQUIRE(c.model.kind == ModelKind::kDlrm);
  REQUIRE(c.model.embedding_dim == 16);
  REQUIRE(c.model.bottom_mlp == std::vector<int>{512, 256, 64, 16});
  REQUIRE(c.model.top_mlp == std::vector<int>{512, 256, 1});
  REQUIRE(c.optimizer.dense == DenseOptimizer::kAdam);
  REQUIRE(c.optimizer.sparse_lr == 0.05);
  REQUIRE(c.dataset.source == "generated");
  REQUIRE(c.dataset.preset == "criteo-kaggle");
  REQUIRE(c.dataset.samples == 1048576);
  REQUIRE(c.dataset.eval_samples == 32768);
  REQUIRE(c.dataset.row_scale == 0.01);
  REQUIRE(c.training.mode == Mode::kLrppDelayed);
  REQUIRE(c.training.batch_size == 2048);
  REQUIRE(c.training.cache_rows == 65536);
  REQUIRE(c.training.metrics_file == "runs/local/metrics.jsonl");

  REQUIRE(c.cluster.members.size() == 1);
  const Member& m = c.cluster.members[0];
  REQUIRE(m.name == "local");
  REQUIRE(m.address == "127.0.0.1");
  REQUIRE(m.port == 0);
  for (Role r : {Role::kSampler, Role::kOracle, Role::kEmbedding, Role::kTrainer}) {
    REQUIRE(m.Has(r));
  }
  REQUIRE(c.cluster.TotalTrainers() == 2);
  REQUIRE(c.cluster.TotalShards() == 2);
  REQUIRE(c.cluster.Coordinator().name == "local");
  REQUIRE(c.cluster.secret.size() >= 16);
}

TEST_CASE("configs/local.toml loads from the source tree like the embedded copy", "[configs]") {
  Config file = LoadConfig(SourcePath("configs/local.toml"));
  Config embedded = LoadEmbeddedLocal();
  REQUIRE(file.digest == embedded.digest);
  REQUIRE(file.path == SourcePath("configs/local.toml"));
}

TEST_CASE("the two-host example numbers ranks and shards in member order", "[configs]") {
  Config c = LoadConfig(SourcePath("configs/examples/two_hosts.toml"));
  REQUIRE(c.cluster.members.size() == 2);
  const Member& a = c.cluster.members[0];
  const Member& b = c.cluster.members[1];
  REQUIRE(a.name == "a");
  REQUIRE(a.address == "10.0.0.1");
  REQUIRE(a.port == 7700);
  REQUIRE(a.Has(Role::kSampler));
  REQUIRE(a.Has(Role::kOracle));
  REQUIRE_FALSE(a.Has(Role::kTrainer));
  REQUIRE(a.trainers == 0);
  REQUIRE(a.embedding_shards == 2);
  REQUIRE(a.first_shard == 0);
  REQUIRE(b.name == "b");
  REQUIRE(b.address == "10.0.0.2");
  REQUIRE(b.trainers == 2);
  REQUIRE(b.first_trainer_rank == 0);
  REQUIRE(b.first_shard == 2);
  REQUIRE(b.line > a.line);
  REQUIRE(c.cluster.TotalTrainers() == 2);
  REQUIRE(c.cluster.TotalShards() == 4);
  // No coordinator in the file: the oracle's member.
  REQUIRE(c.cluster.coordinator == "a");
  REQUIRE(&c.cluster.Coordinator() == &a);
  REQUIRE(c.cluster.Find("b") == &b);
  REQUIRE(c.cluster.Find("c") == nullptr);
}

TEST_CASE("the loopback example puts both members on 127.0.0.1 with their own ports", "[configs]") {
  Config c = LoadConfig(SourcePath("configs/examples/loopback_two_process.toml"));
  REQUIRE(c.cluster.members.size() == 2);
  REQUIRE(c.cluster.members[0].address == "127.0.0.1");
  REQUIRE(c.cluster.members[0].port == 7701);
  REQUIRE(c.cluster.members[1].address == "127.0.0.1");
  REQUIRE(c.cluster.members[1].port == 7702);
  REQUIRE(c.cluster.Coordinator().name == "a");
}

TEST_CASE("every shipped config under configs/ loads without errors", "[configs]") {
  int loaded = 0;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(SourcePath("configs"))) {
    if (entry.path().extension() != ".toml") continue;
    // Its days are made first (`data gen --format criteo_days`): the cli test
    // criteo_days_cli_test.cpp loads and runs it on generated days.
    if (entry.path().filename() == "criteo_terabyte.toml") continue;
    INFO(entry.path().string());
    REQUIRE_NOTHROW(LoadConfig(entry.path().string()));
    ++loaded;
  }
  REQUIRE(loaded >= 3);
}

TEST_CASE("absent keys take the defaults of config.hpp", "[configs]") {
  TempDir dir;
  Config c = LoadConfig(dir.Write("min.toml", kValid));
  REQUIRE(c.run.name == "t");
  REQUIRE(c.run.output_dir == "runs/t");
  REQUIRE(c.run.log_level == "info");
  REQUIRE(c.model.pooling == "sum");
  REQUIRE(c.optimizer.dense_lr == 0.01);
  REQUIRE(c.optimizer.beta2 == 0.999);
  REQUIRE(c.dataset.source == "generated");
  REQUIRE(c.dataset.dense_features == 13);
  REQUIRE(c.training.mode == Mode::kLrppDelayed);
  REQUIRE(c.training.metrics_file == "runs/t/metrics.jsonl");
  REQUIRE(c.cluster.heartbeat_ms == 200);
  REQUIRE(c.cluster.peer_timeout_ms == 3000);
  REQUIRE(c.cluster.members[0].port == 0);
  REQUIRE(c.cluster.members[0].embedding_shards == 1);  // "all" includes embedding
  REQUIRE(c.cluster.coordinator == "local");
}

TEST_CASE("the digest is that of the file's bytes", "[configs]") {
  TempDir dir;
  std::string text = kValid + "# a comment changes the digest\n";
  Config c = LoadConfig(dir.Write("d.toml", text));
  REQUIRE(c.digest == actorrec::Digest64Hex(text));
  REQUIRE(c.digest != LoadConfig(dir.Write("e.toml", kValid)).digest);
}

TEST_CASE("relative dataset paths resolve against the config file's directory", "[configs]") {
  TempDir dir;
  std::string text = Replace(kValid, "samples = 4096",
                             "source = \"criteo_tsv\"\npath = \"data/train.tsv\"\n"
                             "eval_path = \"../held/eval.tsv\"");
  Config c = LoadConfig(dir.Write("sub/cfg.toml", text));
  REQUIRE(c.dataset.path == dir.path() + "/sub/data/train.tsv");
  REQUIRE(c.dataset.eval_path == dir.path() + "/held/eval.tsv");

  // Absolute paths stay as written; output_dir stays relative to the working directory.
  text = Replace(text, "\"data/train.tsv\"", "\"/srv/criteo/train.tsv\"");
  c = LoadConfig(dir.Write("sub/abs.toml", text));
  REQUIRE(c.dataset.path == "/srv/criteo/train.tsv");
  REQUIRE(c.run.output_dir == "runs/t");
}

TEST_CASE("parsed text without a path resolves against the working directory", "[configs]") {
  std::string text = Replace(kValid, "samples = 4096",
                             "source = \"criteo_tsv\"\npath = \"data/train.csv\"");
  Config c = ParseConfig(text, "");
  REQUIRE(c.dataset.path == "data/train.csv");
  c = ParseConfig(text, "conf/x.toml");
  REQUIRE(c.dataset.path == "conf/data/train.csv");
}

TEST_CASE("a secret file is read next to the config, without its trailing newline", "[configs]") {
  TempDir dir;
  dir.Write("cluster.secret", "0123456789abcdef-from-file\n\n");
  std::string text = Replace(kValid, "secret = \"0123456789abcdef-test\"",
                             "secret_file = \"cluster.secret\"");
  Config c = LoadConfig(dir.Write("c.toml", text));
  REQUIRE(c.cluster.secret == "0123456789abcdef-from-file");
}

TEST_CASE("a dcn model needs deep_mlp and cross_layers and loads with them", "[configs]") {
  TempDir dir;
  std::string text = Replace(kValid, "kind = \"dlrm\"\nembedding_dim = 16\nbottom_mlp = [64, 16]\ntop_mlp = [64, 1]",
                             "kind = \"dcn\"\nembedding_dim = 8\ndeep_mlp = [128, 1]\ncross_layers = 3");
  Config c = LoadConfig(dir.Write("dcn.toml", text));
  REQUIRE(c.model.kind == ModelKind::kDcn);
  REQUIRE(c.model.deep_mlp == std::vector<int>{128, 1});
  REQUIRE(c.model.cross_layers == 3);
  REQUIRE(c.model.bottom_mlp.empty());
}

TEST_CASE("a dlrm without dense features loads without a bottom MLP", "[configs]") {
  TempDir dir;
  std::string text = Replace(Replace(kValid, "bottom_mlp = [64, 16]\n", ""), "samples = 4096",
                             "samples = 4096\ndense_features = 0");
  Config c = LoadConfig(dir.Write("no_dense.toml", text));
  REQUIRE(c.model.kind == ModelKind::kDlrm);
  REQUIRE(c.dataset.dense_features == 0);
  REQUIRE(c.model.bottom_mlp.empty());
  REQUIRE(c.model.top_mlp == std::vector<int>{64, 1});
}

TEST_CASE("enum names are spelled as in config files", "[configs]") {
  REQUIRE(std::string(RoleName(Role::kEmbedding)) == "embedding");
  REQUIRE(std::string(ModelKindName(ModelKind::kWideDeep)) == "wide_deep");
  REQUIRE(std::string(ModeName(Mode::kStaticHot)) == "static_hot");
  REQUIRE(std::string(ModeName(Mode::kLrppDelayed)) == "lrpp_delayed");
}

TEST_CASE("a problem prints as file:line: key: message, leaving out empty parts", "[configs]") {
  REQUIRE(Problem{"a.toml", 3, "run.seed", "bad"}.ToString() == "a.toml:3: run.seed: bad");
  REQUIRE(Problem{"a.toml", 0, "", "cannot read"}.ToString() == "a.toml: cannot read");
  REQUIRE(Problem{"a.toml", 7, "", "syntax error: x"}.ToString() == "a.toml:7: syntax error: x");
  ConfigError e({Problem{"a", 1, "k", "one"}, Problem{"a", 2, "k", "two"}});
  REQUIRE(std::string(e.what()) == "a:1: k: one\na:2: k: two");
  REQUIRE(e.problems().size() == 2);
}
