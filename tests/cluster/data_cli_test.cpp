// Bad data and diverging training from the command line: every
// skipped record counted where the user looks, data with no good record an
// error naming the file, a config that disagrees with a converted file's
// schema refused, and a run whose loss turns NaN stopped with exit code 8,
// its last good checkpoint kept and metrics.jsonl still JSON.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "tests/cluster/child_process.hpp"
#include "tests/support/one_process_cluster.hpp"

using namespace actorrec::testing;

namespace {

// A Criteo TSV line; `good` false gives a line of 39 fields (one short).
std::string CriteoLine(int i, bool good) {
  std::string line = std::to_string(i % 3 == 0 ? 1 : 0);
  for (int j = 0; j < 13; ++j) line.append("\t").append(std::to_string(i * j % 50));
  for (int j = 0; j < (good ? 26 : 25); ++j) {
    char hex[9];
    std::snprintf(hex, sizeof hex, "%08x", static_cast<unsigned>((i * 31 + j) % 97));
    line.append("\t").append(hex);
  }
  return line + "\n";
}

std::string CriteoConfig(const std::string& path) {
  return std::string(R"([run]
name = "bad"
[model]
bottom_mlp = [16]
top_mlp = [8, 1]
[dataset]
source = "criteo_tsv"
path = ")") + path + R"("
eval_path = ")" + path + R"("
on_bad_record = "skip"
categorical = "hash"
hash_rows = 97
[training]
batch_size = 32
epochs = 1
)" + OneProcessCluster(1, 1);
}

// Every line of metrics.jsonl is one JSON object with no bare nan or inf
// (JSON has neither).
void CheckJsonLines(const std::string& text) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    INFO(line);
    CHECK(line.front() == '{');
    CHECK(line.back() == '}');
    CHECK_FALSE(std::regex_search(line, std::regex("[:,\\[](-?nan|-?inf)")));
  }
}

}  // namespace

TEST_CASE("train and data stats on Criteo TSV with skipped lines report the counts by reason", "[cli]") {
  TempDir dir;
  std::string tsv;
  for (int i = 0; i < 200; ++i) tsv += CriteoLine(i, i == 0 || i % 2 == 1);  // 99 short lines
  WriteBytes(dir.File("day_0"), tsv);
  WriteBytes(dir.File("bad.toml"), CriteoConfig("day_0"));

  auto train = Actorrec(dir, {"train", "-c", "bad.toml"}, "train.log");
  INFO(train.output);
  REQUIRE(train.code == 0);
  CHECK_THAT(train.output, Catch::Contains("summary: 4 batches, 101 samples"));
  CHECK_THAT(train.output, Catch::Contains("skipped 99 bad record(s) (on_bad_record = \"skip\"):\n  99  wrong column count"));
  CHECK_THAT(train.output, Catch::Contains("first: " + std::string("day_0:3: wrong column count")));
  // The evaluation split (the same file here) is read under the same policy.
  CHECK_THAT(train.output, Catch::Contains("evaluation split day_0: skipped 99 bad record(s)"));
  CHECK_THAT(train.output, Catch::Contains("eval final after 4 batches: AUC "));
  const std::string metrics = ReadBytes(dir.File("runs/bad/metrics.jsonl"));
  CHECK_THAT(metrics, Catch::Contains("\"bad_records\":{\"skipped\":99,\"by_reason\":{\"wrong column count\":99}}"));
  CheckJsonLines(metrics);

  auto stats = Actorrec(dir, {"data", "stats", "--config", "bad.toml"}, "stats.log");
  INFO(stats.output);
  REQUIRE(stats.code == 0);
  CHECK_THAT(stats.output, Catch::Contains("skipped 99 bad record(s)"));
}

TEST_CASE("data whose every record is bad is an error naming the file, not an empty success", "[cli]") {
  TempDir dir;
  // Right columns (so not a schema mismatch), but every label is 2.
  std::string tsv;
  for (int i = 0; i < 50; ++i) tsv.append("2").append(CriteoLine(i, true).substr(1));
  WriteBytes(dir.File("day_0"), tsv);
  WriteBytes(dir.File("bad.toml"), CriteoConfig("day_0"));

  auto train = Actorrec(dir, {"train", "-c", "bad.toml"}, "train.log");
  INFO(train.output);
  CHECK(train.code != 0);
  CHECK_THAT(train.output, Catch::Contains("day_0 has no samples: all 50 record(s) were bad"));
  CHECK_THAT(train.output, Catch::Contains("50 unknown label value"));

  auto convert = Actorrec(dir, {"data", "convert", "-c", "bad.toml", "--out", "d.ards"}, "convert.log");
  INFO(convert.output);
  CHECK(convert.code == 1);
  CHECK_THAT(convert.output, Catch::Contains("day_0 has no samples"));
  CHECK_FALSE(std::filesystem::exists(dir.File("d.ards")));

  auto stats = Actorrec(dir, {"data", "stats", "--config", "bad.toml"}, "stats.log");
  INFO(stats.output);
  CHECK(stats.code == 1);
  CHECK_THAT(stats.output, Catch::Contains("day_0 has no samples"));
}

TEST_CASE("dataset.dense_features that differs from a converted file's schema is an error naming both", "[cli]") {
  TempDir dir;
  const std::string model = "[run]\nname = \"df\"\n[model]\nbottom_mlp = [16]\ntop_mlp = [8, 1]\n";
  WriteBytes(dir.File("gen.toml"), model + "[dataset]\npreset = \"custom\"\ntable_rows = [100, 200]\n"
                                           "dense_features = 4\nsamples = 2048\n" + OneProcessCluster(1, 1));
  auto gen = Actorrec(dir, {"data", "gen", "-c", "gen.toml", "--out", "d.ards"}, "gen.log");
  INFO(gen.output);
  REQUIRE(gen.code == 0);
  WriteBytes(dir.File("train.toml"), model + "[dataset]\nsource = \"actorrec\"\npath = \"d.ards\"\n"
                                             "dense_features = 13\n[training]\nbatch_size = 256\n" +
                                             OneProcessCluster(1, 1));
  auto train = Actorrec(dir, {"train", "-c", "train.toml"}, "train.log");
  INFO(train.output);
  CHECK(train.code == 2);
  CHECK_THAT(train.output, Catch::Contains("dataset.dense_features is 13, but d.ards (source = \"actorrec\") has 4 "
                                           "dense features: set dataset.dense_features = 4"));
}

TEST_CASE("a diverging run stops with exit code 8 naming the batch, keeps its last good checkpoint, writes JSON",
          "[cli]") {
  TempDir dir;
  const bool lockstep = GENERATE(false, true);
  INFO((lockstep ? "--lockstep" : "actor pipeline"));
  WriteBytes(dir.File("nan.toml"), std::string(R"([run]
name = "nan"
[model]
bottom_mlp = [16]
top_mlp = [8, 1]
[optimizer]
dense_lr = 1e12
sparse_lr = 1e12
[dataset]
preset = "custom"
table_rows = [100, 200]
dense_features = 4
samples = 8192
eval_samples = 512
[training]
batch_size = 256
epochs = 1
)") + OneProcessCluster(2, 1));
  std::vector<std::string> args = {"train", "-c", "nan.toml", "--checkpoint-dir", "ck", "--checkpoint-every", "1"};
  if (lockstep) args.push_back("--lockstep");
  auto train = Actorrec(dir, args, "train.log");
  INFO(train.output);
  CHECK(train.code == 8);
  CHECK(std::regex_search(train.output, std::regex("the loss of batch [0-9]+ of epoch 0 is (NaN|infinite): "
                                                   "training diverged")));
  const std::string metrics = ReadBytes(dir.File("runs/nan/metrics.jsonl"));
  CHECK_THAT(metrics, Catch::Contains("{\"event\":\"diverged\",\"epoch\":0,\"batch\":"));
  CheckJsonLines(metrics);
  // The checkpoint LATEST names (written before the loss turned) holds
  // finite dense parameters: safetensors, an 8-byte header length, the
  // header, then float32 data.
  std::ifstream latest(dir.File("ck/LATEST"));
  std::string name;
  REQUIRE(std::getline(latest, name));
  const std::string dense = ReadBytes(dir.File("ck/" + name + "/dense.safetensors"));
  uint64_t header = 0;
  REQUIRE(dense.size() > 8);
  std::memcpy(&header, dense.data(), 8);
  REQUIRE((dense.size() - 8 - header) % 4 == 0);
  size_t non_finite = 0;
  for (size_t at = 8 + header; at < dense.size(); at += 4) {
    float x;
    std::memcpy(&x, dense.data() + at, 4);
    non_finite += !std::isfinite(x);
  }
  CHECK(non_finite == 0);
}
