// The actorrec command line as a user meets it: help, the embedded default,
// and bad configs.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "tests/cluster/child_process.hpp"
#include "tests/support/one_process_cluster.hpp"

using namespace actorrec::testing;
using namespace std::chrono_literals;

TEST_CASE("--help lists every subcommand and the exit codes", "[cli]") {
  TempDir dir;
  auto r = Actorrec(dir, {"--help"});
  REQUIRE(r.code == 0);
  for (const char* sub : {"train", "node", "data", "plan", "inspect", "bench", "Exit codes"}) {
    INFO(sub);
    REQUIRE_THAT(r.output, Catch::Contains(sub));
  }
}

TEST_CASE("train on the embedded default starts every role, trains, learns and exits 0", "[cli]") {
  TempDir dir;
  auto r = Actorrec(dir, {"train"});
  INFO(r.output);
  REQUIRE(r.code == 0);
  REQUIRE_THAT(r.output, Catch::Contains("config <embedded local.toml>"));
  REQUIRE_THAT(r.output, Catch::Contains("backend: "));
  REQUIRE_THAT(r.output, Catch::Contains("1 member(s), 10 role actors registered"));
  for (const char* actor : {"batch_sampler", "oracle", "embedding_shard[1]", "trainer[1]", "cache_partition[0]",
                            "sync_scheduler[1]"}) {
    INFO(actor);
    REQUIRE_THAT(r.output, Catch::Contains(actor));
  }
  REQUIRE_THAT(r.output, Catch::Contains("summary: 512 batches, 1048576 samples"));
  REQUIRE_THAT(r.output, Catch::Contains("  bytes per batch: "));
  // The iteration breakdown names forward and backward apart.
  REQUIRE_THAT(r.output, Catch::Matches("(.|\\n)*per batch \\(ms, slowest trainer\\): waiting for rows [0-9.]+, "
                                        "forward [0-9.]+, backward [0-9.]+, dense \\+ critical sync(.|\\n)*"));
  // The shard actors' own report of what they hold.
  REQUIRE_THAT(r.output, Catch::Matches("(.|\\n)*embedding shards: [1-9][0-9]* rows resident in 2 shard\\(s\\)(.|\\n)*"));
  // It learns: the held-out AUC of the generated data's hidden model is far
  // above chance after one epoch (0.776 when this test was written).
  REQUIRE_THAT(r.output, Catch::Matches("(.|\\n)*eval final after 512 batches: AUC 0\\.(7[5-9]|8)(.|\\n)*"));
  std::ifstream metrics(dir.File("runs/local/metrics.jsonl"));
  std::string attempt, first;
  REQUIRE(std::getline(metrics, attempt));
  REQUIRE_THAT(attempt, Catch::StartsWith("{\"event\":\"attempt\",\"started\":\""));
  REQUIRE_THAT(attempt, Catch::Contains("\"first_batch\":0,\"resume_dir\":\"\",\"config\":\"<embedded local.toml>\""));
  REQUIRE(std::getline(metrics, first));
  REQUIRE_THAT(first, Catch::StartsWith("{\"event\":\"batch\",\"epoch\":0,\"batch\":0,"));
  REQUIRE_THAT(first, Catch::Matches(".*\"fetch_s\":[0-9.e-]+,\"forward_s\":[0-9.e-]+,\"backward_s\":[0-9.e-]+,"
                                     "\"dense_sync_s\":[0-9.e-]+,\"exposed_delayed_s\":[0-9.e-]+,"
                                     "\"optimizer_s\":[0-9.e-]+,\"stream_wait_rows_s\":[0-9.e-]+,"
                                     "\"stream_wait_sync_s\":[0-9.e-]+,\"stream_waits_clock\":\"(host|device)\","
                                     "\"elapsed_s\":[0-9.e-]+\\}"));
  std::string line, last;
  while (std::getline(metrics, line)) last = line;
  REQUIRE_THAT(last, Catch::StartsWith("{\"event\":\"summary\","));
  REQUIRE_THAT(last, Catch::Contains("\"shard_bytes\":"));
  REQUIRE_THAT(last, Catch::Contains("\"ms_per_batch\":{\"fetch\":"));
  REQUIRE_THAT(last, Catch::Contains("\"stream_wait_ms_per_batch\":{\"rows\":"));
  REQUIRE_THAT(r.output, Catch::Matches("(.|\\n)*  compute stream waited per batch \\(ms, [^)]*clock[^)]*\\): for rows [0-9.]+, "
                                        "for sync [0-9.]+\n(.|\\n)*"));
  // The summary prints the digest that metrics.jsonl records.
  const size_t at = last.find("\"parameter_digest\":\"");
  REQUIRE(at != std::string::npos);
  REQUIRE_THAT(r.output, Catch::Contains("  parameter digest: " + last.substr(at + 20, 16) + "\n"));
}

TEST_CASE("docs/config.md is what `actorrec config reference` prints from the loader", "[cli]") {
  TempDir dir;
  auto r = Actorrec(dir, {"config", "reference"});
  REQUIRE(r.code == 0);
  std::ifstream in(std::string(ACTORREC_SOURCE_DIR) + "/docs/config.md");
  const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // When this fails: build/actorrec config reference > docs/config.md
  REQUIRE(r.output == page);
}

TEST_CASE("--set overrides config keys on the command line, validated and named like the file's", "[cli]") {
  TempDir dir;
  auto r = Actorrec(dir, {"train", "--set", "training.max_batches=2", "--set", "training.mode=lrpp"});
  INFO(r.output);
  REQUIRE(r.code == 0);
  REQUIRE_THAT(r.output, Catch::Contains("config <embedded local.toml> with --set training.max_batches=2 --set "
                                         "training.mode=lrpp (digest "));
  REQUIRE_THAT(r.output, Catch::Contains("mode lrpp,"));
  REQUIRE_THAT(r.output, Catch::Contains("summary: 2 batches"));
  auto bad = Actorrec(dir, {"train", "--set", "training.batch_size=1001", "--set", "training.mdoe=lrpp"});
  INFO(bad.output);
  REQUIRE(bad.code == 2);
  REQUIRE_THAT(bad.output, Catch::Contains("--set training.batch_size=1001: training.batch_size: expected a multiple"));
  REQUIRE_THAT(bad.output, Catch::Contains("--set training.mdoe=lrpp: training.mdoe: unknown key (did you mean mode?)"));
}

TEST_CASE("data gen writes a dataset file and reports the Bayes-optimal AUC of its labels", "[cli]") {
  TempDir dir;
  auto r = Actorrec(dir, {"data", "gen", "--samples", "20000", "--out", dir.File("gen.ards")});
  INFO(r.output);
  REQUIRE(r.code == 0);
  REQUIRE_THAT(r.output, Catch::Contains("20000 samples, 26 tables, 13 dense features"));
  REQUIRE_THAT(r.output, Catch::Contains("Bayes-optimal AUC of the generated labels: 0."));
  REQUIRE(std::filesystem::file_size(dir.File("gen.ards")) > 20000 * 4 * (1 + 13 + 26));
}

TEST_CASE("data convert reads the real Adult splits through the schema CSV config", "[cli]") {
  TempDir dir;
  std::ifstream in(std::string(ACTORREC_SOURCE_DIR) + "/configs/adult.toml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto replace = [&](const std::string& from, const std::string& to) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
      text.replace(at, from.size(), to);
    }
  };
  // Appends only: GCC 12 warns (-Wrestrict, a false positive) on "\"" + std::string(…).
  replace("\"../datasets", std::string("\"").append(ACTORREC_SOURCE_DIR).append("/datasets"));
  replace("name = \"adult\"", "name = \"adult\"\noutput_dir = \"" + dir.path() + "/out\"");
  WriteBytes(dir.File("adult.toml"), text);
  auto train = Actorrec(dir, {"data", "convert", "--config", dir.File("adult.toml"), "--out", dir.File("a.ards")});
  INFO(train.output);
  REQUIRE(train.code == 0);
  REQUIRE_THAT(train.output, Catch::Contains("32561 samples, 8 tables, 6 dense features"));
  REQUIRE(std::filesystem::exists(dir.path() + "/out/adult.data.mapping"));
  auto test = Actorrec(dir, {"data", "convert", "--config", dir.File("adult.toml"), "--split", "eval", "--out",
                             dir.File("t.ards")});
  INFO(test.output);
  REQUIRE(test.code == 0);
  REQUIRE_THAT(test.output, Catch::Contains("16281 samples"));
}

TEST_CASE("the shipped Wide&Deep with crossed columns trains on Adult; data convert leaves the crosses out", "[cli]") {
  TempDir dir;
  const std::string config = std::string(ACTORREC_SOURCE_DIR) + "/configs/models/wide_deep_crosses.toml";
  const std::string out = "run.output_dir=" + dir.path() + "/out";
  auto train = Actorrec(dir, {"train", "--config", config, "--set", "training.epochs=1", "--set", out});
  INFO(train.output);
  REQUIRE(train.code == 0);
  // Adult's 8 categorical tables and the 2 crosses, planned like any table.
  REQUIRE_THAT(train.output, Catch::Contains("10 tables (the last 2 crossed columns, wide only), 6 dense features"));
  REQUIRE_THAT(train.output, Catch::Matches("(.|\\n)*eval final after 128 batches: AUC 0\\.(8[5-9]|9)(.|\\n)*"));
  // A converted file holds the data's own tables: crosses belong to a model.
  auto convert = Actorrec(dir, {"data", "convert", "--config", config, "--set", out, "--out", dir.File("a.ards")});
  INFO(convert.output);
  REQUIRE(convert.code == 0);
  REQUIRE_THAT(convert.output, Catch::Contains("32561 samples, 8 tables, 6 dense features"));
}

TEST_CASE("data convert names the config key when a split is missing", "[cli]") {
  TempDir dir;
  auto r = Actorrec(dir, {"data", "convert", "--config", std::string(ACTORREC_SOURCE_DIR) + "/configs/local.toml",
                          "--split", "eval", "--out", dir.File("x.ards")});
  INFO(r.output);
  REQUIRE(r.code == 0);  // the local config has eval_samples: the eval split is generated
  auto bad = Actorrec(dir, {"data", "convert", "--config", std::string(ACTORREC_SOURCE_DIR) + "/configs/local.toml",
                            "--split", "test", "--out", dir.File("x.ards")});
  REQUIRE(bad.code == 2);
  REQUIRE_THAT(bad.output, Catch::Contains("--split test is not a split; use train or eval"));
}

TEST_CASE("a bad config is reported with file, line and key, and exits 2", "[cli]") {
  TempDir dir;
  const std::string bad = dir.File("bad.toml");
  WriteBytes(bad, "[training]\nmode = \"lrp\"\n\n[[cluster.member]]\nname = \"x\"\naddress = \"127.0.0.1\"\n"
                 "roles = [\"all\"]\n[cluster]\nsecret = \"long-enough-secret-here\"\n");
  auto r = Actorrec(dir, {"train", "--config", bad});
  INFO(r.output);
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.output, Catch::Contains(bad + ":2: training.mode"));
  REQUIRE_THAT(r.output, Catch::Contains("lrpp_delayed"));
}

TEST_CASE("node refuses a --member that the topology does not name", "[cli]") {
  TempDir dir;
  auto r = Actorrec(dir, {"node", "--config", std::string(ACTORREC_SOURCE_DIR) + "/configs/examples/two_hosts.toml",
                          "--member", "zz"});
  INFO(r.output);
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.output, Catch::Contains("--member zz is not in the topology; its members are: a, b"));
}

TEST_CASE("data stats shows the requested skew of generated data, as a table and as JSON", "[cli]") {
  TempDir dir;
  WriteBytes(dir.File("skew.toml"), std::string(R"([run]
name = "skew"
[model]
bottom_mlp = [16]
top_mlp = [8, 1]
[dataset]
preset = "custom"
table_rows = [100000]
dense_features = 1
samples = 200000
[dataset.generator]
skew = "top_share"
hot_fraction = 0.01
hot_share = 0.9
[training]
batch_size = 4096
)") + OneProcessCluster());
  auto gen = Actorrec(dir, {"data", "gen", "--config", dir.File("skew.toml"), "--out", dir.File("s.ards")});
  REQUIRE(gen.code == 0);
  auto stats = Actorrec(dir, {"data", "stats", dir.File("s.ards"), "--json", dir.File("s.json")});
  INFO(stats.output);
  REQUIRE(stats.code == 0);
  REQUIRE_THAT(stats.output, Catch::Contains("top1%"));
  // "top 1 % of rows take 90 % of accesses": the C1 row shows 89.x % or 90.x %.
  REQUIRE_THAT(stats.output, Catch::Matches("(.|\\n)*C1 +100000 +200000 +[0-9]+ +1\\.00 +[0-9.]+% +(89|90)\\.[0-9]+%(.|\\n)*"));
  std::ifstream json(dir.File("s.json"));
  std::string text((std::istreambuf_iterator<char>(json)), std::istreambuf_iterator<char>());
  REQUIRE_THAT(text, Catch::Contains("\"top_share_of_rows\""));
}

namespace {

bool CpuHas(const std::string& flag) {
  std::ifstream in("/proc/cpuinfo");
  std::string word;
  while (in >> word) {
    if (word == flag) return true;
  }
  return false;
}

}  // namespace

// ACTORREC_VECTOR_CLONES promises the same bits on every vector width. The
// same small run natively (the models' AVX-512 clones) and under valgrind,
// whose CPU has no AVX-512 (the AVX2 clones); oneDNN is held to AVX2 in both,
// since its own sgemm kernels differ by ISA.
TEST_CASE("the models' vector clones train to the same bits on AVX-512 and on AVX2", "[cli]") {
  if (!CpuHas("avx512f") || !std::filesystem::exists("/usr/bin/valgrind")) {
    WARN("not checked: needs a CPU with AVX-512 and /usr/bin/valgrind");
    return;
  }
  TempDir dir;
  WriteBytes(dir.File("small.toml"), std::string(R"(
[run]
name = "isa"
seed = 3
[model]
kind = "dlrm"
embedding_dim = 16
bottom_mlp = [64, 16]
top_mlp = [64, 1]
[dataset]
source = "generated"
preset = "criteo-kaggle"
samples = 1024
eval_samples = 0
row_scale = 0.001
[training]
batch_size = 256
)") + OneProcessCluster(2, 2));
  setenv("ONEDNN_MAX_CPU_ISA", "AVX2", 1);
  auto native = Actorrec(dir, {"train", "--lockstep", "--config", dir.File("small.toml")}, "native.log");
  const std::string native_digest = DigestIn(ReadBytes(dir.File("runs/isa/metrics.jsonl")));
  ChildProcess emulated({"/usr/bin/valgrind", "--tool=none", ActorrecBinary(), "train", "--lockstep", "--config",
                         dir.File("small.toml")},
                        dir.File("valgrind.log"));
  const auto code = emulated.WaitExit(240s);
  unsetenv("ONEDNN_MAX_CPU_ISA");
  INFO(native.output << "\nunder valgrind:\n" << emulated.Log());
  REQUIRE(native.code == 0);
  REQUIRE(code == 0);
  REQUIRE(native_digest.size() == 16);
  REQUIRE(DigestIn(ReadBytes(dir.File("runs/isa/metrics.jsonl"))) == native_digest);
}

namespace {

// A one-process DLRM config of `cache_rows` slots per trainer, 2 trainers;
// `extra` goes into [training].
std::string CacheConfig(const TempDir& dir, const std::string& cache_rows, int dim = 16,
                        const std::string& sparse = "sgd", const std::string& more_training = "") {
  return dir.Write("cache.toml", R"([run]
name = "cache"
output_dir = ")" + dir.path() + R"(/out"
[model]
embedding_dim = )" + std::to_string(dim) + R"(
bottom_mlp = [)" + std::to_string(dim) + R"(]
top_mlp = [8, 1]
[optimizer]
sparse = ")" + sparse + R"("
[dataset]
samples = 4096
eval_samples = 0
row_scale = 0.001
[training]
batch_size = 512
cache_rows = )" + cache_rows + "\n" + more_training + OneProcessCluster(2));
}

}  // namespace

TEST_CASE("a cache that cannot fit in memory is a config error naming file, line, key and memory, not an abort",
          "[cli]") {
  TempDir dir;
  // 2 trainers x 2^31 - 1 slots x 12292 bytes a row (1024 weights, adam): 52.8 TB.
  const std::string path = CacheConfig(dir, "2147483647", 1024, "adam");
  auto r = Actorrec(dir, {"train", "--config", path});
  INFO(r.output);
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.output, Catch::Contains(path + ":16: training.cache_rows: needs at least 52.8 TB (2 trainers x "
                                                "2147483647 slots x 12292 bytes a row"));
  REQUIRE_THAT(r.output, Catch::Contains(" of memory; lower it"));
  for (const char* huge : {"2147483648", "1000000000000000"}) {
    auto h = Actorrec(dir, {"plan", "--config", CacheConfig(dir, huge)});
    INFO(h.output);
    REQUIRE(h.code == 2);
    REQUIRE_THAT(h.output, Catch::Contains(":16: training.cache_rows: expected an integer in [1, 2147483647]"));
  }
}

TEST_CASE("memory that runs out during start-up ends train with exit 7 and a message, not an abort", "[cli]") {
  TempDir dir;
  // 4.3 GB of caches: within the machine's memory, beyond the 2.5 GB of
  // address space the shell allows the process.
  const std::string path = CacheConfig(dir, "33554432");
  ChildProcess child({"/bin/sh", "-c", "ulimit -v 2500000 && exec '" + ActorrecBinary() + "' train --config '" + path + "'"},
                     dir.File("oom.log"));
  const auto code = child.WaitExit(240s);
  INFO(child.Log());
  REQUIRE(code == 7);
  REQUIRE_THAT(child.Log(), Catch::Contains("actorrec train: out of memory: "));
  REQUIRE_THAT(child.Log(), !Catch::Contains("terminate called"));
}

TEST_CASE("cluster.collective = nccl where the trainers cannot join NCCL is a config error naming the key and why",
          "[cli]") {
  TempDir dir;
  const std::string path = CacheConfig(dir, "65536", 16, "sgd", "backend = \"cpu\"\n");
  auto r = Actorrec(dir, {"train", "--config", path, "--set", "cluster.collective=nccl"});
  INFO(r.output);
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.output, Catch::Contains(": cluster.collective = \"nccl\" cannot be used here: "));
  // A build with NCCL names the CPU backend; one without, the build.
  REQUIRE_THAT(r.output, Catch::Contains("its trainers run the CPU backend (") ||
                             Catch::Contains("this build has no NCCL"));
  auto automatic = Actorrec(dir, {"train", "--config", path, "--set", "cluster.collective=auto"});
  INFO(automatic.output);
  CHECK(automatic.code == 0);  // auto never refuses: CPU trainers of one process sum through shared memory
}

TEST_CASE("train with training.backend = cuda and no usable device is a config error; auto falls back and says so",
          "[cli]") {
  TempDir dir;
  auto with = [&](const std::string& backend) {
    return CacheConfig(dir, "65536", 16, "sgd", "backend = \"" + backend + "\"\n");
  };
  auto automatic = Actorrec(dir, {"train", "--config", with("auto")});
  INFO(automatic.output);
  REQUIRE(automatic.code == 0);
  const std::string path = with("cuda");
  auto cuda = Actorrec(dir, {"train", "--config", path});
  INFO(cuda.output);
  if (automatic.output.find("backend: cuda (device 0: ") != std::string::npos) {
    REQUIRE(cuda.code == 0);  // a GPU machine: both train on it
    return;
  }
  REQUIRE_THAT(automatic.output, Catch::Contains("backend: cpu ("));
  REQUIRE_THAT(automatic.output, Catch::Matches("(.|\\n)*; training\\.backend = auto: [^\\n]+: using the CPU backend\\n(.|\\n)*"));
  REQUIRE(cuda.code == 2);
  REQUIRE_THAT(cuda.output, Catch::Contains(path + ": training.backend = \"cuda\": "));
  REQUIRE_THAT(cuda.output, Catch::Contains("set training.backend = \"cpu\" (or \"auto\") to train on the CPU"));
  REQUIRE_THAT(cuda.output, Catch::Contains("no usable CUDA device (") || Catch::Contains("this build has no CUDA"));
}
