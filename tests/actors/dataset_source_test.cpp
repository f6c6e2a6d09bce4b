// Every input format, opened from a config: read directly and read back
// after conversion to actorrec's columnar format, the samples are identical.
#include "actors/sampler/dataset_source.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "data/format/convert.hpp"
#include "data/format/dataset_file_reader.hpp"
#include "data/gen/synthetic_generator.hpp"
#include "tests/cluster/child_process.hpp"

using namespace actorrec;
using actorrec::testing::TempDir;
using actorrec::testing::WriteBytes;

namespace {

data::SampleBlock ReadAll(data::SampleReader& reader) {
  data::SampleBlock all, block;
  all.Reset(reader.schema());
  for (;;) {
    auto st = reader.Next(1000, &block);
    REQUIRE(st.ok());
    if (block.empty()) return all;
    all.Append(block, 0, block.size());
  }
}

// A config whose [dataset] is `dataset` (written into `dir`); a DLRM, with
// a bottom MLP unless the dataset has no dense features.
config::Config ConfigWith(const TempDir& dir, const std::string& dataset) {
  const bool dense = dataset.find("dense_features = 0") == std::string::npos;
  const std::string text = "[run]\nname = \"rt\"\noutput_dir = \"" + dir.path() + "/out\"\n[model]\n" +
                           (dense ? "bottom_mlp = [16]\n" : "") + "top_mlp = [8, 1]\n[dataset]\n" + dataset +
                           "\n[cluster]\nsecret = \"round-trip-secret-0123\"\n[[cluster.member]]\nname = \"l\"\n"
                           "address = \"127.0.0.1\"\nroles = [\"all\"]\n";
  WriteBytes(dir.File("rt.toml"), text);
  return config::LoadConfig(dir.File("rt.toml"));
}

// Reads the configured train split directly, converts it, and compares.
void CheckRoundTrip(const config::Config& cfg, const TempDir& dir, size_t expected_samples, size_t tables) {
  auto direct = OpenDatasetSplit(cfg, Split::kTrain);
  REQUIRE(direct.ok());
  const data::SampleBlock want = ReadAll(**direct);
  REQUIRE(want.size() == expected_samples);
  REQUIRE(want.tables.size() == tables);
  auto again = OpenDatasetSplit(cfg, Split::kTrain);
  REQUIRE(again.ok());
  auto report = data::format::Convert(**again, dir.File("rt.ards"));
  REQUIRE(report.ok());
  REQUIRE(report->samples == expected_samples);
  auto file = data::format::DatasetFileReader::Open(dir.File("rt.ards"));
  REQUIRE(file.ok());
  REQUIRE((*file)->schema() == (*direct)->schema());
  REQUIRE(ReadAll(**file) == want);
}

std::string Hex(uint32_t x) {
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", x);
  return buf;
}

void WriteNpy(const std::string& path, const std::string& descr, std::vector<size_t> shape, const void* data,
              size_t bytes) {
  std::string dims;
  for (size_t d : shape) dims += std::to_string(d) + ",";
  if (shape.size() > 1) dims.pop_back();
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  const uint16_t len = static_cast<uint16_t>(header.size());
  out.append(reinterpret_cast<const char*>(&len), 2);
  out += header;
  out.append(static_cast<const char*>(data), bytes);
  WriteBytes(path, out);
}

}  // namespace

TEST_CASE("Criteo TSV converts and reads back identically", "[data]") {
  TempDir dir;
  std::string tsv;
  for (uint32_t i = 0; i < 300; ++i) {
    tsv += std::to_string(i % 3 == 0);
    // Appends only: GCC 12 warns (-Wrestrict, a false positive) on "\t" + std::string.
    for (int j = 0; j < 13; ++j) tsv.append("\t").append(j == 4 && i % 5 == 0 ? std::string() : std::to_string(int(i * j) - 40));
    for (int j = 0; j < 26; ++j) tsv.append("\t").append(j == 7 && i % 7 == 0 ? std::string() : Hex(i % (j + 3) * 2654435761u));
    tsv += "\n";
  }
  WriteBytes(dir.File("day_0"), tsv);
  CheckRoundTrip(ConfigWith(dir, "source = \"criteo_tsv\"\npath = \"day_0\"\ncategorical = \"hash\"\nhash_rows = 97"),
                 dir, 300, 26);
  CheckRoundTrip(ConfigWith(dir, "source = \"criteo_tsv\"\npath = \"day_0\"\nmapping_file = \"dict.map\""), dir, 300, 26);
  REQUIRE(std::filesystem::exists(dir.File("dict.map")));
}

TEST_CASE("Avazu CSV converts and reads back identically", "[data]") {
  TempDir dir;
  std::string csv =
      "id,click,hour,C1,banner_pos,site_id,site_domain,site_category,app_id,app_domain,app_category,device_id,"
      "device_ip,device_model,device_type,device_conn_type,C14,C15,C16,C17,C18,C19,C20,C21\n";
  for (int i = 0; i < 200; ++i) {
    csv += std::to_string(1000 + i) + "," + std::to_string(i % 4 == 0) + ",141021" + (i % 24 < 10 ? "0" : "") +
           std::to_string(i % 24);
    for (int j = 0; j < 21; ++j) csv += ",v" + std::to_string((i * 31 + j) % (j + 2));
    csv += "\n";
  }
  WriteBytes(dir.File("train.csv"), csv);
  CheckRoundTrip(ConfigWith(dir, "source = \"avazu_csv\"\npath = \"train.csv\"\ndense_features = 0"), dir, 200, 23);
}

TEST_CASE("the real Adult data converts and reads back identically through the schema CSV", "[data]") {
  TempDir dir;
  std::ifstream in(std::string(ACTORREC_SOURCE_DIR) + "/configs/adult.toml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string datasets = std::string(ACTORREC_SOURCE_DIR) + "/datasets";
  for (size_t at = text.find("\"../datasets"); at != std::string::npos; at = text.find("\"../datasets", at)) {
    text.replace(at + 1, 11, datasets);
  }
  text.replace(text.find("name = \"adult\""), 14, "name = \"adult\"\noutput_dir = \"" + dir.path() + "/out\"");
  WriteBytes(dir.File("adult.toml"), text);
  CheckRoundTrip(config::LoadConfig(dir.File("adult.toml")), dir, 32561, 8);
}

TEST_CASE("the DLRM binary converts and reads back identically", "[data]") {
  TempDir dir;
  std::vector<int32_t> ints;
  for (int32_t i = 0; i < 100; ++i) {
    ints.push_back(i % 2);
    for (int j = 0; j < 13; ++j) ints.push_back(i * j);
    for (int j = 0; j < 26; ++j) ints.push_back((i * 7 + j) % 50);
  }
  WriteBytes(dir.File("train.bin"), std::string(reinterpret_cast<const char*>(ints.data()), ints.size() * 4));
  std::string rows = "table_rows = [";
  for (int j = 0; j < 26; ++j) rows += std::string(j ? ", " : "") + "50";
  CheckRoundTrip(ConfigWith(dir, "source = \"dlrm_binary\"\npath = \"train.bin\"\n" + rows + "]"), dir, 100, 26);
}

TEST_CASE("TorchRec NumPy triplets convert and read back identically", "[data]") {
  TempDir dir;
  const size_t n = 64;
  std::vector<float> dense(n * 13);
  std::vector<int32_t> sparse(n * 26), labels(n);
  for (size_t i = 0; i < n; ++i) {
    labels[i] = static_cast<int32_t>(i % 3 == 0);
    for (size_t j = 0; j < 13; ++j) dense[i * 13 + j] = 0.25f * static_cast<float>(i + j);
    for (size_t j = 0; j < 26; ++j) sparse[i * 26 + j] = static_cast<int32_t>((i + j) % 40);
  }
  WriteNpy(dir.File("day_0_dense.npy"), "<f4", {n, 13}, dense.data(), dense.size() * 4);
  WriteNpy(dir.File("day_0_sparse.npy"), "<i4", {n, 26}, sparse.data(), sparse.size() * 4);
  WriteNpy(dir.File("day_0_labels.npy"), "<i4", {n}, labels.data(), labels.size() * 4);
  std::string rows = "table_rows = [";
  for (int j = 0; j < 26; ++j) rows += std::string(j ? ", " : "") + "40";
  CheckRoundTrip(ConfigWith(dir, "source = \"torchrec_npy\"\npath = \"day_0\"\n" + rows + "]"), dir, n, 26);
}

TEST_CASE("generated data converts and reads back identically, and its eval split differs", "[data]") {
  TempDir dir;
  auto cfg = ConfigWith(dir, "samples = 3000\neval_samples = 500\nrow_scale = 0.001");
  CheckRoundTrip(cfg, dir, 3000, 26);
  auto eval = OpenDatasetSplit(cfg, Split::kEval);
  REQUIRE(eval.ok());
  auto train = OpenDatasetSplit(cfg, Split::kTrain);
  data::SampleBlock a = ReadAll(**eval), b;
  REQUIRE(a.size() == 500);
  REQUIRE((*train)->Next(500, &b).ok());
  REQUIRE_FALSE(a.dense == b.dense);
}

TEST_CASE("a generated training epoch keeps no per-sample Bayes AUC record", "[data]") {
  // The sampler streams an epoch for the whole run: a record of 8 bytes a
  // sample (up to 128 MiB) grew its memory with every batch.
  TempDir dir;
  auto cfg = ConfigWith(dir, "samples = 3000\nrow_scale = 0.001");
  auto epoch = OpenEpoch(cfg, Split::kTrain, 0);
  REQUIRE(epoch.ok());
  REQUIRE(ReadAll(**epoch).size() == 3000);
  const auto* gen = dynamic_cast<const data::gen::SyntheticGenerator*>(epoch->get());
  REQUIRE(gen != nullptr);
  REQUIRE(gen->auc_samples() == 0);
  // The same samples as the split read whole, which still records them for
  // `actorrec data convert`'s Bayes AUC.
  auto split = OpenDatasetSplit(cfg, Split::kTrain);
  auto again = OpenEpoch(cfg, Split::kTrain, 0);
  REQUIRE(ReadAll(**split) == ReadAll(**again));
  REQUIRE(dynamic_cast<const data::gen::SyntheticGenerator&>(**split).auc_samples() == 3000);
}

TEST_CASE("a missing eval split is an error naming the key", "[data]") {
  TempDir dir;
  WriteBytes(dir.File("x.tsv"), "1\t2\n");
  auto cfg = ConfigWith(dir, "source = \"criteo_tsv\"\npath = \"x.tsv\"");
  auto eval = OpenDatasetSplit(cfg, Split::kEval);
  REQUIRE_FALSE(eval.ok());
  REQUIRE_THAT(eval.status().message(), Catch::Contains("dataset.eval_path is not set"));
}

TEST_CASE("dataset files stream in a seeded epoch order that differs by epoch and restarts exactly", "[data]") {
  TempDir dir;
  auto gen_cfg = ConfigWith(dir, "samples = 5000\nrow_scale = 0.001");
  auto gen = OpenDatasetSplit(gen_cfg, Split::kTrain);
  REQUIRE(data::format::Convert(**gen, dir.File("d.ards")).ok());
  auto cfg = ConfigWith(dir, "source = \"actorrec\"\npath = \"d.ards\"");
  cfg.training.batch_size = 512;
  auto epoch_samples = [&](uint32_t epoch) {
    auto reader = OpenEpoch(cfg, Split::kTrain, epoch);
    REQUIRE(reader.ok());
    return ReadAll(**reader);
  };
  const auto e0 = epoch_samples(0), e0_again = epoch_samples(0), e1 = epoch_samples(1);
  REQUIRE(e0.size() == 5000);
  REQUIRE(e0 == e0_again);
  REQUIRE_FALSE(e0.dense == e1.dense);
  // Same samples, other order: the multiset of labels and of dense values agrees.
  auto sorted = [](std::vector<float> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  REQUIRE(sorted(e0.dense) == sorted(e1.dense));
  REQUIRE(sorted(e0.labels) == sorted(e1.labels));
  cfg.dataset.shuffle = false;
  auto file_order = OpenDatasetSplit(cfg, Split::kTrain);
  auto unshuffled = OpenEpoch(cfg, Split::kTrain, 1);
  REQUIRE(ReadAll(**unshuffled) == ReadAll(**file_order));
}

TEST_CASE("a saved mapping built from other data or with another min_count is refused, saying what differs",
          "[data]") {
  TempDir dir;
  // Two Criteo days with different values: day_1's dictionary knows none of day_0's.
  for (int day = 0; day < 2; ++day) {
    std::string tsv;
    for (uint32_t i = 0; i < 100; ++i) {
      tsv += std::to_string(i % 2);
      for (int j = 0; j < 13; ++j) tsv.append("\t").append(std::to_string(i % 7));
      for (int j = 0; j < 26; ++j) tsv.append("\t").append(Hex((i % 10 + 1) * (day == 0 ? 1u : 1000u)));
      tsv += "\n";
    }
    WriteBytes(dir.File("day_" + std::to_string(day)), tsv);
  }
  const auto config = [&](const std::string& path, int min_count) {
    return ConfigWith(dir, "source = \"criteo_tsv\"\npath = \"" + path + "\"\nmapping_file = \"dict.map\"\n" +
                               "min_count = " + std::to_string(min_count));
  };
  REQUIRE(OpenDatasetSplit(config("day_0", 1), Split::kTrain).ok());  // builds and saves dict.map
  REQUIRE(std::filesystem::exists(dir.File("dict.map")));
  REQUIRE(OpenDatasetSplit(config("day_0", 1), Split::kTrain).ok());  // the same data: reused

  SECTION("another training file") {
    auto other = OpenDatasetSplit(config("day_1", 1), Split::kTrain);
    REQUIRE_FALSE(other.ok());
    CHECK(other.status().code() == Status::Code::kInvalidArgument);
    CHECK_THAT(other.status().message(),
               Catch::StartsWith("dataset.mapping_file " + dir.File("dict.map") + " does not fit this dataset: it was "
                                 "built from " + dir.File("day_0") + " (") &&
                   Catch::Contains("not from " + dir.File("day_1") + " (") &&
                   Catch::Contains("Delete it to rebuild it from dataset.path"));
  }
  SECTION("another min_count") {
    auto other = OpenDatasetSplit(config("day_0", 3), Split::kTrain);
    REQUIRE_FALSE(other.ok());
    CHECK_THAT(other.status().message(),
               Catch::Contains("does not fit this dataset: C1 was built with min_count = 1, the config says 3"));
  }
  SECTION("the same file, grown") {
    std::ofstream(dir.File("day_0"), std::ios::app) << "1" << std::string(13, '\t') << std::string(26, '\t') << "\n";
    CHECK_FALSE(OpenDatasetSplit(config("day_0", 1), Split::kTrain).ok());
  }
  SECTION("a copy of the same data elsewhere") {
    std::filesystem::copy_file(dir.File("day_0"), dir.File("copy"));
    CHECK(OpenDatasetSplit(config("copy", 1), Split::kTrain).ok());
  }
}

TEST_CASE("a split may be several files or a glob, gzip-compressed, read in sorted order as one stream", "[data]") {
  TempDir dir;
  std::filesystem::create_directories(dir.File("days"));
  std::string all;
  for (int day = 0; day < 3; ++day) {
    std::string tsv;
    for (uint32_t i = 0; i < 50; ++i) {
      tsv += std::to_string((i + day) % 3 == 0);
      for (int j = 0; j < 13; ++j) tsv.append("\t").append(std::to_string(int(i * j + day)));
      for (int j = 0; j < 26; ++j) tsv.append("\t").append(Hex((i + day) % (j + 3) * 2654435761u));
      tsv += "\n";
    }
    all += tsv;
    WriteBytes(dir.File("days/day_" + std::to_string(day)), tsv);
    // The same day gzip-compressed by the system's gzip, as Criteo Terabyte ships it.
    REQUIRE(std::system(("gzip -c " + dir.File("days/day_" + std::to_string(day)) + " > " +
                         dir.File("days/day_" + std::to_string(day) + ".gz"))
                            .c_str()) == 0);
  }
  WriteBytes(dir.File("all.tsv"), all);
  const std::string keys = "\ncategorical = \"hash\"\nhash_rows = 97\nsource = \"criteo_tsv\"\n";
  auto read = [&](const std::string& path_value) {
    auto split = OpenDatasetSplit(ConfigWith(dir, "path = " + path_value + keys), Split::kTrain);
    INFO(path_value);
    REQUIRE(split.ok());
    return ReadAll(**split);
  };
  const data::SampleBlock want = read("\"all.tsv\"");
  REQUIRE(want.size() == 150);
  CHECK(read("\"days/day_?.gz\"") == want);
  CHECK(read("[\"days/day_0\", \"days/day_1.gz\", \"days/day_2\"]") == want);
  CHECK(read("[\"days/day_[0-1].gz\", \"days/day_2.gz\"]") == want);
  // Conversion of the glob names every file it read in the dataset's identity.
  CheckRoundTrip(ConfigWith(dir, "path = \"days/day_*.gz\"" + keys), dir, 150, 26);
}

TEST_CASE("a glob that matches nothing, or several files for an actorrec dataset, is a config error", "[data]") {
  TempDir dir;
  WriteBytes(dir.File("a.ards"), "x");
  WriteBytes(dir.File("b.ards"), "x");
  try {
    ConfigWith(dir, "source = \"criteo_tsv\"\npath = \"days/day_*.gz\"");
    FAIL("loaded");
  } catch (const config::ConfigError& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("dataset.path: no file matches \"days/day_*.gz\""));
  }
  try {
    ConfigWith(dir, "source = \"actorrec\"\npath = \"*.ards\"");
    FAIL("loaded");
  } catch (const config::ConfigError& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("dataset.path: expected one file for source = \"actorrec\"; got 2"));
  }
}

TEST_CASE("eval_fraction holds out part of the training files: the splits are disjoint and make up the whole", "[data]") {
  TempDir dir;
  std::string tsv;
  for (uint32_t i = 0; i < 400; ++i) {
    tsv += std::to_string(i % 2);
    // Dense feature 1 numbers the samples (log1p of it comes back, exactly distinct).
    for (int j = 0; j < 13; ++j) tsv.append("\t").append(std::to_string(j == 0 ? int(i) : j));
    for (int j = 0; j < 26; ++j) tsv.append("\t").append(Hex(i % (j + 3) * 2654435761u));
    tsv += "\n";
  }
  WriteBytes(dir.File("train.tsv"), tsv);
  const auto cfg = ConfigWith(dir, "source = \"criteo_tsv\"\npath = \"train.tsv\"\neval_fraction = 0.25\n"
                                   "categorical = \"hash\"\nhash_rows = 97");
  REQUIRE(cfg.dataset.has_eval());
  auto train = OpenDatasetSplit(cfg, Split::kTrain);
  auto eval = OpenDatasetSplit(cfg, Split::kEval);
  REQUIRE(train.ok());
  REQUIRE(eval.ok());
  const data::SampleBlock a = ReadAll(**train), b = ReadAll(**eval);
  REQUIRE(a.size() + b.size() == 400);
  CHECK(b.size() > 60);
  CHECK(b.size() < 140);
  std::vector<float> seen;
  for (size_t i = 0; i < a.size(); ++i) seen.push_back(a.dense[i * 13]);
  for (size_t i = 0; i < b.size(); ++i) seen.push_back(b.dense[i * 13]);
  std::sort(seen.begin(), seen.end());
  CHECK(std::adjacent_find(seen.begin(), seen.end()) == seen.end());  // no sample on both sides
}

TEST_CASE("eval_fraction with an eval_path, or for an actorrec file, is a config error", "[data]") {
  TempDir dir;
  WriteBytes(dir.File("a.ards"), "x");
  for (const auto& [dataset, message] :
       {std::pair{std::string("source = \"criteo_tsv\"\npath = \"t\"\neval_path = \"e\"\neval_fraction = 0.1"),
                  std::string("dataset.eval_fraction: expected eval_path or eval_fraction, not both")},
        std::pair{std::string("source = \"actorrec\"\npath = \"a.ards\"\neval_fraction = 0.1"),
                  std::string("dataset.eval_fraction: does not apply to source = \"actorrec\"")}}) {
    try {
      ConfigWith(dir, dataset);
      FAIL("loaded");
    } catch (const config::ConfigError& e) {
      CHECK_THAT(std::string(e.what()), Catch::Contains(message));
    }
  }
}

TEST_CASE("a dedup group naming a table the data does not have is refused naming the key", "[data][dedup]") {
  // Sources whose tables the config cannot count (a file's header, a
  // preset) are checked against the schema once the data is open.
  config::Config cfg = config::LoadEmbeddedLocal();
  data::DatasetSchema schema;
  schema.dense_names.resize(static_cast<size_t>(cfg.dataset.dense_features));
  schema.tables.resize(4);
  cfg.dataset.dedup_groups = {{0, 1}, {3}};
  REQUIRE(CheckSchema(cfg, schema).ok());
  cfg.dataset.dedup_groups = {{0, 1}, {3, 4}};
  const Status st = CheckSchema(cfg, schema);
  REQUIRE_FALSE(st.ok());
  CHECK_THAT(st.message(), Catch::Contains("dataset.dedup_groups[1].tables: table 4 does not exist") &&
                               Catch::Contains("has 4 tables"));
}
