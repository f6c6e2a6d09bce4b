// [dataset.generator], [dataset.csv] and the categorical mapping keys.
#include <catch2/catch.hpp>

#include "configs/config.hpp"
#include "tests/configs/config_test_util.hpp"

using namespace actorrec::config;
using namespace actorrec::config::testing;

TEST_CASE("the generator table sets skew, bags and sessions", "[configs]") {
  TempDir dir;
  const std::string text = Replace(kValid, "samples = 4096",
                                   "samples = 4096\n\n[dataset.generator]\nskew = \"top_share\"\nhot_fraction = 0.01\n"
                                   "hot_share = 0.9\nbag = \"uniform\"\nbag_min = 1\nbag_max = 4\n"
                                   "session_length = 8\nsession_dup = [0.9, 0.1]\ndistinct_ids = true\n");
  Config c = LoadConfig(dir.Write("gen.toml", text));
  REQUIRE(c.dataset.generator.skew == "top_share");
  REQUIRE(c.dataset.generator.hot_share == 0.9);
  REQUIRE(c.dataset.generator.bag == "uniform");
  REQUIRE(c.dataset.generator.bag_max == 4);
  REQUIRE(c.dataset.generator.session_length == 8);
  REQUIRE(c.dataset.generator.session_dup == std::vector<double>{0.9, 0.1});
  REQUIRE(c.dataset.generator.distinct_ids);
}

TEST_CASE("generator keys out of range or misspelled are named with their line", "[configs]") {
  TempDir dir;
  const std::string text = Replace(kValid, "samples = 4096",
                                   "samples = 4096\n\n[dataset.generator]\nhot_share = 1.5\nsession_dup = [0.5, 2]\n"
                                   "skeww = \"zipf\"\ndistinct_ids = \"yes\"\n");
  const std::string path = dir.Write("bad_gen.toml", text);
  const std::string error = LoadError(path);
  REQUIRE_THAT(error, Catch::Contains(At(path, text, "hot_share") + "dataset.generator.hot_share: expected"));
  REQUIRE_THAT(error, Catch::Contains("dataset.generator.session_dup[1]"));
  REQUIRE_THAT(error, Catch::Contains(At(path, text, "skeww") + "dataset.generator.skeww: unknown key (did you mean skew?)"));
  REQUIRE_THAT(error, Catch::Contains("dataset.generator.distinct_ids: expected true or false"));
}

TEST_CASE("a csv dataset needs its [dataset.csv] table, which names the columns", "[configs]") {
  TempDir dir;
  const std::string base = Replace(kValid, "samples = 4096", "source = \"csv\"\npath = \"x.csv\"");
  REQUIRE_THAT(LoadError(dir.Write("no_csv.toml", base)), Catch::Contains("dataset.csv: missing"));
  const std::string text = base + "\n[dataset.csv]\nlabel = \"y\"\npositive = [\"1\"]\nnegative = [\"0\"]\n"
                                  "dense = [\"a\"]\nheader = true\nseparator = \"\\t\"\n";
  Config c = LoadConfig(dir.Write("csv.toml", text));
  REQUIRE(c.dataset.csv.separator == "\t");
  REQUIRE(c.dataset.csv.header);
  REQUIRE(c.dataset.csv.dense == std::vector<std::string>{"a"});
  REQUIRE(c.dataset.mapping_file == "runs/t/x.csv.mapping");
  const std::string no_columns = Replace(text, "header = true", "header = false");
  REQUIRE_THAT(LoadError(dir.Write("no_columns.toml", no_columns)),
               Catch::Contains("dataset.csv.columns: missing; required when header = false"));
}

TEST_CASE("categorical mapping keys apply only to raw text sources", "[configs]") {
  TempDir dir;
  const std::string text = Replace(kValid, "samples = 4096", "samples = 4096\ncategorical = \"hash\"");
  REQUIRE_THAT(LoadError(dir.Write("gen_hash.toml", text)),
               Catch::Contains("dataset.categorical: applies only to raw text sources"));
  const std::string tsv = Replace(kValid, "samples = 4096",
                                  "source = \"criteo_tsv\"\npath = \"day_0\"\ncategorical = \"hash\"\n"
                                  "hash_rows = 1000\nmapping_file = \"maps/day0.map\"");
  Config c = LoadConfig(dir.Write("tsv.toml", tsv));
  REQUIRE(c.dataset.categorical == "hash");
  REQUIRE(c.dataset.hash_rows == 1000);
  REQUIRE(c.dataset.mapping_file == dir.path() + "/maps/day0.map");
}

TEST_CASE("the shipped Adult config describes the real files", "[configs]") {
  Config c = LoadConfig(std::string(ACTORREC_SOURCE_DIR) + "/configs/adult.toml");
  REQUIRE(c.dataset.source == "csv");
  REQUIRE(c.dataset.csv.columns.size() == 15);
  REQUIRE(c.dataset.csv.dense.size() + c.dataset.csv.categorical.size() == 14);
  REQUIRE_THAT(c.dataset.path, Catch::EndsWith("/datasets/adult/adult.data"));
}

TEST_CASE("a libfm dataset needs [dataset.libfm] with its fields and no dense features", "[configs]") {
  TempDir dir;
  // A DLRM without dense features has no bottom_mlp.
  const std::string libfm = Replace(Replace(kValid, "samples = 4096",
                                            "source = \"libfm\"\npath = \"train.libfm\"\ndense_features = 0\n\n"
                                            "[dataset.libfm]\nfields = 10\nfield_ids = true\n"),
                                    "bottom_mlp = [64, 16]\n", "");
  Config c = LoadConfig(dir.Write("fm.toml", libfm));
  REQUIRE(c.dataset.source == "libfm");
  REQUIRE(c.dataset.libfm.fields == 10);
  REQUIRE(c.dataset.libfm.field_ids);
  REQUIRE(c.dataset.raw_text());
  REQUIRE_THAT(c.dataset.mapping_file, Catch::EndsWith("train.libfm.mapping"));

  const std::string no_table = Replace(kValid, "samples = 4096", "source = \"libfm\"\npath = \"train.libfm\"\n");
  const std::string error = LoadError(dir.Write("bad.toml", no_table));
  REQUIRE_THAT(error, Catch::Contains("dataset.libfm: missing"));
  REQUIRE_THAT(error, Catch::Contains("dataset.dense_features: expected 0 for source = \"libfm\""));
  const std::string elsewhere = Replace(kValid, "samples = 4096", "samples = 4096\n\n[dataset.libfm]\nfields = 3\n");
  REQUIRE_THAT(LoadError(dir.Write("gen.toml", elsewhere)),
               Catch::Contains("dataset.libfm: applies only to source = \"libfm\""));
}
