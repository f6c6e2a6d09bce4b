// The MLPerf DLRM Criteo Terabyte recipe end to end on tiny generated days:
// `data gen --format criteo_days` writes day_0.gz … day_23.gz, the shipped
// configs/criteo_terabyte.toml converts days 0-22 (in parallel, the same
// bytes as on one thread, and the dictionary counted on three threads the
// same as on one) and day 23 with one shared mapping, and trains a
// few batches straight from the gzipped days, evaluating on day 23.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "tests/cluster/child_process.hpp"

using namespace actorrec::testing;

namespace {

// The shipped Terabyte config in `dir`/configs, where its relative paths
// expect it (beside runs/), and `days` generated gzipped days of `samples`
// each in runs/`folder`.
void ShipConfigAndDays(const TempDir& dir, int days, int samples, const std::string& folder) {
  std::filesystem::create_directories(dir.File("configs"));
  WriteBytes(dir.File("configs/criteo_terabyte.toml"),
             ReadBytes(std::string(ACTORREC_SOURCE_DIR) + "/configs/criteo_terabyte.toml"));
  auto gen = Actorrec(dir,
                      {"data", "gen", "--format", "criteo_days", "--days", std::to_string(days), "--samples",
                       std::to_string(samples), "--out", "runs/" + folder},
                      "gen.log");
  INFO(gen.output);
  REQUIRE(gen.code == 0);
  CHECK_THAT(gen.output, Catch::Contains("Bayes-optimal AUC of day_" + std::to_string(days - 1) + " (the eval day)"));
}

}  // namespace

TEST_CASE("the Criteo Terabyte recipe converts 24 generated gzipped days in parallel and trains on them", "[cli]") {
  TempDir dir;
  ShipConfigAndDays(dir, 24, 96, "criteo_terabyte");
  for (int day = 0; day < 24; ++day) {
    const std::string bytes = ReadBytes(dir.File("runs/criteo_terabyte/day_" + std::to_string(day) + ".gz"));
    REQUIRE(bytes.size() > 2);
    CHECK(bytes.substr(0, 2) == "\x1f\x8b");  // gzip, as the Terabyte days ship
  }

  const std::vector<std::string> convert = {"data", "convert", "-c", "configs/criteo_terabyte.toml"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = convert;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  // The dictionary is counted by the first conversion, on its threads; the
  // second counts it again on one thread and must build the same mapping.
  const std::string mapping = dir.File("runs/criteo_terabyte/days.mapping");
  auto three = Actorrec(dir, with({"--out", "runs/three.ards", "-j", "3"}), "three.log");
  INFO(three.output);
  REQUIRE(three.code == 0);
  CHECK_THAT(three.output, Catch::Contains("counting categorical values: 23/23 pieces"));
  CHECK_THAT(three.output, Catch::Contains("converting: 23/23 pieces written"));
  const std::string counted_on_three = ReadBytes(mapping);
  std::filesystem::remove(mapping);
  auto one = Actorrec(dir, with({"--out", "runs/one.ards", "-j", "1"}), "one.log");
  INFO(one.output);
  REQUIRE(one.code == 0);
  CHECK_THAT(one.output, Catch::Contains("2208 samples, 26 tables, 13 dense features"));  // 23 days of 96
  CHECK(ReadBytes(mapping) == counted_on_three);
  CHECK(ReadBytes(dir.File("runs/three.ards")) == ReadBytes(dir.File("runs/one.ards")));
  auto eval = Actorrec(dir, with({"--split", "eval", "--out", "runs/eval.ards"}), "eval.log");
  INFO(eval.output);
  REQUIRE(eval.code == 0);
  CHECK_THAT(eval.output, Catch::Contains("96 samples"));
  CHECK(std::filesystem::exists(dir.File("runs/criteo_terabyte/days.mapping")));

  auto train = Actorrec(dir,
                        {"train", "-c", "configs/criteo_terabyte.toml", "--set", "training.batch_size=64", "--set",
                         "training.max_batches=3", "--set", "training.cache_rows=4096", "--inspect", "off"},
                        "train.log");
  INFO(train.output);
  REQUIRE(train.code == 0);
  CHECK_THAT(train.output, Catch::Contains("summary: 3 batches"));
  CHECK_THAT(train.output, Catch::Contains("eval final after 3 batches: AUC"));
  CHECK_THAT(train.output, Catch::Contains("(96 samples)"));
}

TEST_CASE("one big plain Criteo file converts in pieces on several threads to the bytes of one thread", "[cli]") {
  TempDir dir;
  ShipConfigAndDays(dir, 2, 12000, "days");
  // Criteo Kaggle ships one plain train.txt: day 0, uncompressed (3.2 MB).
  const std::string unzip = "gzip -dc '" + dir.File("runs/days/day_0.gz") + "' > '" + dir.File("runs/train.txt") + "'";
  REQUIRE(std::system(unzip.c_str()) == 0);
  auto convert = [&](std::vector<std::string> extra, const std::string& log) {
    std::vector<std::string> args = {"data", "convert", "-c", "configs/criteo_terabyte.toml",
                                     "--set", "dataset.path=../runs/train.txt",
                                     "--set", "dataset.eval_path=../runs/train.txt",
                                     "--set", "dataset.mapping_file=../runs/train.mapping",
                                     "--set", "dataset.min_count=2"};
    args.insert(args.end(), extra.begin(), extra.end());
    return Actorrec(dir, args, log);
  };
  auto pieces = convert({"--out", "runs/pieces.ards", "-j", "3", "--piece-mb", "1"}, "pieces.log");
  INFO(pieces.output);
  REQUIRE(pieces.code == 0);
  CHECK_THAT(pieces.output, Catch::Contains("counting categorical values: 4/4 pieces"));
  CHECK_THAT(pieces.output, Catch::Contains("converting: 4/4 pieces written"));
  CHECK_THAT(pieces.output, Catch::Contains("12000 samples, 26 tables"));
  const std::string counted_in_pieces = ReadBytes(dir.File("runs/train.mapping"));
  std::filesystem::remove(dir.File("runs/train.mapping"));
  auto whole = convert({"--out", "runs/whole.ards", "-j", "1"}, "whole.log");
  INFO(whole.output);
  REQUIRE(whole.code == 0);
  CHECK(ReadBytes(dir.File("runs/train.mapping")) == counted_in_pieces);
  CHECK(ReadBytes(dir.File("runs/pieces.ards")) == ReadBytes(dir.File("runs/whole.ards")));

  // A bad line in the third piece fails naming the file's own line number.
  std::string text = ReadBytes(dir.File("runs/train.txt"));
  size_t at = 2 * (size_t{1} << 20) + 100;
  at = text.find('\n', at) + 1;
  const size_t line = static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n')) + 1;
  text.insert(at, "1\t2\tnot a Criteo line\n");
  WriteBytes(dir.File("runs/train.txt"), text);
  std::filesystem::remove(dir.File("runs/train.mapping"));
  auto bad = convert({"--out", "runs/bad.ards", "-j", "3", "--piece-mb", "1"}, "bad.log");
  INFO(bad.output);
  CHECK(bad.code == 1);
  CHECK_THAT(bad.output, Catch::Contains("train.txt:" + std::to_string(line) + ":"));
  CHECK_FALSE(std::filesystem::exists(dir.File("runs/bad.ards")));
}
