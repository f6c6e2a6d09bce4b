// `actorrec plan` as a user runs it: the real binary on a small generated
// config, its JSON lines parsed one by one.
#include <catch2/catch.hpp>

#include <cctype>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cluster/child_process.hpp"
#include "tests/support/one_process_cluster.hpp"

using namespace actorrec::testing;
using namespace std::chrono_literals;

namespace {

// A strict parser of the JSON the plan dump writes (objects, arrays,
// integers; no strings but keys): records the top-level keys and the
// integers of "batch" and "trainer". False on anything malformed.
class LineParser {
 public:
  explicit LineParser(const std::string& s) : s_(s) {}
  bool Parse() { return Value(0) && at_ == s_.size(); }
  std::vector<std::string> keys;
  long long batch = -2, trainer = -2;

 private:
  bool Value(int depth) {
    if (at_ >= s_.size()) return false;
    if (s_[at_] == '{') return Object(depth);
    if (s_[at_] == '[') return Array(depth);
    return Number(nullptr);
  }
  bool Number(long long* out) {
    const size_t start = at_;
    if (at_ < s_.size() && s_[at_] == '-') ++at_;
    while (at_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[at_]))) ++at_;
    if (at_ == start || (s_[start] == '-' && at_ == start + 1)) return false;
    if (out) *out = std::stoll(s_.substr(start, at_ - start));
    return true;
  }
  bool Key(std::string* key) {
    if (at_ >= s_.size() || s_[at_] != '"') return false;
    const size_t end = s_.find('"', at_ + 1);
    if (end == std::string::npos) return false;
    *key = s_.substr(at_ + 1, end - at_ - 1);
    at_ = end + 1;
    return at_ < s_.size() && s_[at_++] == ':';
  }
  bool Object(int depth) {
    ++at_;
    if (at_ < s_.size() && s_[at_] == '}') return ++at_, true;
    while (true) {
      std::string key;
      if (!Key(&key)) return false;
      if (depth == 0) keys.push_back(key);
      if (depth == 0 && (key == "batch" || key == "trainer")) {
        if (!Number(key == "batch" ? &batch : &trainer)) return false;
      } else if (!Value(depth + 1)) {
        return false;
      }
      if (at_ >= s_.size()) return false;
      if (s_[at_] == '}') return ++at_, true;
      if (s_[at_++] != ',') return false;
    }
  }
  bool Array(int depth) {
    ++at_;
    if (at_ < s_.size() && s_[at_] == ']') return ++at_, true;
    while (true) {
      if (!Value(depth + 1)) return false;
      if (at_ >= s_.size()) return false;
      if (s_[at_] == ']') return ++at_, true;
      if (s_[at_++] != ',') return false;
    }
  }
  const std::string& s_;
  size_t at_ = 0;
};

const std::vector<std::string> kKeys = {"batch",    "trainer",     "lookahead", "barrier", "occupancy",
                                        "prefetch", "privatePrefetch", "features", "privateRows", "critical",
                                        "delayed",  "evictions"};

std::string Config(const TempDir& dir, uint64_t cache_rows, const std::string& mode) {
  const std::string path = dir.File("plan.toml");
  WriteBytes(path, R"([run]
name = "plan"
output_dir = ")" + dir.path() + R"(/out"
[model]
embedding_dim = 8
bottom_mlp = [8]
top_mlp = [8, 1]
[dataset]
preset = "custom"
table_rows = [50, 3000, 20000]
dense_features = 1
samples = 8192
[training]
mode = ")" + mode + R"("
batch_size = 256
cache_rows = )" + std::to_string(cache_rows) + R"(
)" + OneProcessCluster(2));
  return path;
}

// A hardware profile of round figures, written to dir/hw.toml; its path.
std::string TestHosts(const TempDir& dir) {
  return dir.Write("hw.toml", R"([hardware]
name = "test hosts"
gemm_gflops = 50
memory_gbps = 10
network_gbit = 1
network_latency_us = 100
host_device_gbps = 0
trainer_memory_gib = 1
shard_memory_gib = 1
)");
}

std::smatch Match(const std::string& line, const std::string& pattern) {
  std::smatch m;
  std::regex_search(line, m, std::regex(pattern));
  return m;
}

// Every integer inside every match of `pattern`'s first group, e.g. the
// values of each "uniqueSlots" array.
std::vector<long long> Numbers(const std::string& line, const std::string& pattern) {
  std::vector<long long> out;
  const std::regex re(pattern);
  for (auto it = std::sregex_iterator(line.begin(), line.end(), re); it != std::sregex_iterator(); ++it) {
    std::stringstream list((*it)[1].str());
    for (std::string n; std::getline(list, n, ',');) {
      if (!n.empty()) out.push_back(std::stoll(n));
    }
  }
  return out;
}

std::vector<std::string> Lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

TEST_CASE("plan writes one parsable JSON line per batch and trainer, and reports L and a summary", "[cli][plan]") {
  TempDir dir;
  const std::string mode = GENERATE(std::string("lrpp_delayed"), std::string("replicated"));
  CAPTURE(mode);
  auto r = Actorrec(dir, {"plan", "--config", Config(dir, 4096, mode), "--batches", "7", "--out",
                          dir.File("plans/p.jsonl")});
  INFO(r.output);
  REQUIRE(r.code == 0);
  REQUIRE_THAT(r.output, Catch::Contains("actorrec plan: lookahead "));
  REQUIRE_THAT(r.output, Catch::Contains("(automatic"));
  REQUIRE_THAT(r.output, Catch::Contains("wrote 14 line(s), 7 batch(es)"));
  REQUIRE_THAT(r.output, Catch::Contains("7 batches: "));
  REQUIRE_THAT(r.output, Catch::Contains("% from the cache"));
  const std::vector<std::string> lines = Lines(dir.File("plans/p.jsonl"));
  REQUIRE(lines.size() == 14);
  bool any_private = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    CAPTURE(i, lines[i].substr(0, 200));
    LineParser p(lines[i]);
    REQUIRE(p.Parse());
    REQUIRE(p.keys == kKeys);
    REQUIRE(p.batch == static_cast<long long>(i / 2));
    REQUIRE(p.trainer == static_cast<long long>(i % 2));
    any_private |= lines[i].find("\"privateRows\":[]") == std::string::npos;
  }
  REQUIRE(any_private == (mode == "lrpp_delayed"));

  // --trainer: that trainer's lines only, the same ones.
  auto one = Actorrec(dir, {"plan", "--config", dir.File("plan.toml"), "--batches", "7", "--trainer", "1", "--out",
                            dir.File("t1.jsonl")});
  INFO(one.output);
  REQUIRE(one.code == 0);
  const std::vector<std::string> t1 = Lines(dir.File("t1.jsonl"));
  REQUIRE(t1.size() == 7);
  for (size_t b = 0; b < t1.size(); ++b) REQUIRE(t1[b] == lines[2 * b + 1]);
}

TEST_CASE("plan writes the direct modes' plans as the oracle actor makes them", "[cli][plan]") {
  TempDir dir;
  const std::string mode = GENERATE(std::string("no_cache"), std::string("static_hot"), std::string("ideal"));
  CAPTURE(mode);
  auto r = Actorrec(dir, {"plan", "--config", Config(dir, 4096, mode), "--batches", "5", "--out", dir.File("p.jsonl")});
  INFO(r.output);
  REQUIRE(r.code == 0);
  REQUIRE_THAT(r.output, Catch::Contains("actorrec plan: " + mode + ": "));  // the planner's own report
  const std::vector<std::string> lines = Lines(dir.File("p.jsonl"));
  REQUIRE(lines.size() == 10);
  for (size_t i = 0; i < lines.size(); ++i) {
    CAPTURE(i, lines[i].substr(0, 200));
    LineParser p(lines[i]);
    REQUIRE(p.Parse());
    REQUIRE(p.keys == kKeys);
    const long long b = static_cast<long long>(i / 2);
    // ideal writes nothing back before the end, so its fetches never wait;
    // the others fetch each batch after the previous one's write-backs.
    const std::string window = mode == "ideal"
                                   ? "\"lookahead\":" + std::to_string(b) + ",\"barrier\":-1,"
                                   : "\"lookahead\":0,\"barrier\":" + std::to_string(b - 1) + ",";
    CHECK_THAT(lines[i], Catch::Contains(window));
    CHECK_THAT(lines[i], Catch::Contains("\"delayed\":[]"));
    // static_hot and no_cache keep to training.cache_rows (4096) like the
    // lookahead modes, the hot rows and a batch's staging together; ideal
    // holds every row (50 + 3000 + 20000 slots) by definition.
    if (mode == "ideal") continue;
    const std::smatch occupancy = Match(lines[i], "\"occupancy\":([0-9]+)");
    REQUIRE_FALSE(occupancy.empty());
    CHECK(std::stoll(occupancy[1]) <= 4096);
    for (long long slot : Numbers(lines[i], "\"uniqueSlots\":\\[([0-9,]*)\\]")) CHECK(slot < 4096);
  }
}

TEST_CASE("plan with a cache too small names the capacity needed and training.cache_rows", "[cli][plan]") {
  TempDir dir;
  // static_hot too: its hot rows and one batch's staging share the 40 slots.
  const std::string mode = GENERATE(std::string("lrpp_delayed"), std::string("static_hot"));
  CAPTURE(mode);
  auto r = Actorrec(dir, {"plan", "--config", Config(dir, 40, mode), "--out", dir.File("p.jsonl")});
  INFO(r.output);
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.output, Catch::Contains("needs "));
  REQUIRE_THAT(r.output, Catch::Contains("training.cache_rows = 40"));
}

TEST_CASE("plan refuses a trainer the config does not have", "[cli][plan]") {
  TempDir dir;
  auto r = Actorrec(dir, {"plan", "--config", Config(dir, 4096, "lrpp"), "--trainer", "2"});
  INFO(r.output);
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.output, Catch::Contains("trainer 2 does not exist: the run has 2 trainer(s)"));
}

TEST_CASE("plan --help explains the fields of its output", "[cli][plan]") {
  TempDir dir;
  auto r = Actorrec(dir, {"plan", "--help"});
  REQUIRE(r.code == 0);
  for (const std::string& key : kKeys) {
    INFO(key);
    REQUIRE_THAT(r.output, Catch::Contains(key));
  }
  REQUIRE_THAT(r.output, Catch::Contains("docs/plan_format.md"));
}

TEST_CASE("train with a cache too small exits 2 as plan does, prints no summary and keeps the last metrics",
          "[cli][plan]") {
  TempDir dir;
  const std::string metrics = dir.Write("out/metrics.jsonl", "{\"event\":\"summary\",\"previous\":true}\n");
  const std::string config = Config(dir, 40, "lrpp_delayed");
  for (const bool lockstep : {false, true}) {
    std::vector<std::string> args = {"train", "--config", config};
    if (lockstep) args.push_back("--lockstep");
    auto r = Actorrec(dir, args);
    INFO(r.output);
    REQUIRE(r.code == 2);
    REQUIRE_THAT(r.output, Catch::Contains("training.cache_rows: the cache is too small"));
    REQUIRE_THAT(r.output, !Catch::Contains("summary:"));
    REQUIRE(ReadBytes(metrics) == "{\"event\":\"summary\",\"previous\":true}\n");
  }
}

TEST_CASE("plan --recommend picks a configuration and predicts every mode on a given hardware profile",
          "[cli][plan]") {
  TempDir dir;
  const std::string hardware = TestHosts(dir);
  auto r = Actorrec(dir, {"plan", "--config", Config(dir, 4096, "lrpp_delayed"), "--batches", "4", "--recommend",
                          "--hardware", hardware});
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.output, Catch::Contains("hardware test hosts"));
  CHECK(std::regex_search(r.output, std::regex(R"(recommended: training.batch_size = \d+, training.cache_rows = \d+)")));
  CHECK(std::regex_search(r.output, std::regex("dominated by (compute|fetch|sync)")));
  for (const char* mode : {"no_cache", "static_hot", "replicated", "lrpp ", "lrpp_delayed", "ideal"}) {
    CHECK(std::regex_search(r.output, std::regex(std::string("\n  ") + mode + R"( *[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +\d+)")));
  }
}

TEST_CASE("plan --recommend needs a hardware profile, and a bad one is named", "[cli][plan]") {
  TempDir dir;
  auto none = Actorrec(dir, {"plan", "--recommend"});
  CHECK(none.code == 2);
  CHECK_THAT(none.output, Catch::Contains("--hardware"));
  const std::string bad = dir.Write("hw.toml", "[hardware]\nname = \"x\"\n");
  auto r = Actorrec(dir, {"plan", "--config", Config(dir, 4096, "lrpp"), "--batches", "2", "--recommend",
                          "--hardware", bad});
  CHECK(r.code == 2);
  CHECK_THAT(r.output, Catch::Contains("hw.toml") && Catch::Contains("hardware.gemm_gflops"));
}

TEST_CASE("plan --recommend shares a host's cores between its trainers, the sampler and the oracle", "[cli][plan]") {
  TempDir dir;
  const std::string base = R"([hardware]
name = "test hosts"
gemm_gflops = 0.001
memory_gbps = 0.001
network_gbit = 1
network_latency_us = 100
host_device_gbps = 0
trainer_memory_gib = 1
shard_memory_gib = 1
)";
  // Slow rates, so that compute shows in whole milliseconds.
  const std::string config = Config(dir, 4096, "lrpp_delayed");
  // The first configured lrpp_delayed line's compute ms.
  auto compute_ms = [](const std::string& output) {
    std::smatch m;
    REQUIRE(std::regex_search(output, m, std::regex(R"(\n  lrpp_delayed +([0-9.]+))")));
    return std::stod(m[1].str());
  };
  auto own = Actorrec(dir, {"plan", "--config", config, "--batches", "2", "--recommend", "--hardware",
                            dir.Write("own.toml", base)});
  INFO(own.output);
  REQUIRE(own.code == 0);
  CHECK_THAT(own.output, Catch::Contains("each trainer computes at 1.00 of a core"));
  // One member on 2 cores: 2 trainers, the sampler and the oracle: half a core each.
  auto shared = Actorrec(dir, {"plan", "--config", config, "--batches", "2", "--recommend", "--hardware",
                               dir.Write("shared.toml", base + "host_cores = 2\n"), "--one-host"});
  INFO(shared.output);
  REQUIRE(shared.code == 0);
  CHECK_THAT(shared.output, Catch::Contains("2 cores a host") && Catch::Contains("computes at 0.50 of a core"));
  CHECK(compute_ms(shared.output) == Approx(2 * compute_ms(own.output)).epsilon(0.01));
}

TEST_CASE("plan --calibrate fits a profile to a run's metrics, and a bad line is named", "[cli][plan]") {
  TempDir dir;
  const std::string hardware = TestHosts(dir);
  const std::string config = Config(dir, 4096, "lrpp_delayed");
  // Four batches of 100 ms, the longest sync phase 30 ms: the trainers'
  // work is what the tiny model's sum (well under a millisecond) leaves.
  std::string metrics = "{\"event\":\"attempt\",\"first_batch\":0}\n";
  for (int b = 0; b < 4; ++b) {
    metrics += "{\"event\":\"batch\",\"batch\":" + std::to_string(b) +
               ",\"critical_rows\":10,\"fetch_s\":0,\"dense_sync_s\":0.03,\"exposed_delayed_s\":0,\"elapsed_s\":" +
               std::to_string(0.1 * (b + 1)) + "}\n";
  }
  dir.Write("run/metrics.jsonl", metrics);
  auto r = Actorrec(dir, {"plan", "--config", config, "--calibrate", dir.File("run"), "--warmup", "1", "--hardware",
                          hardware, "--out", dir.File("fitted.toml")});
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.output, Catch::Contains("3 batch(es) after a warmup of 1"));
  const std::string fitted = ReadBytes(dir.File("fitted.toml"));
  CHECK(std::regex_search(fitted, std::regex(R"(\ntrainer_gflops = [0-9.e-]+)")));
  CHECK(std::regex_search(fitted, std::regex(R"(\ntrainer_spread = 0\.[0-9]+)")));

  // --recommend reads it and says the rate is calibrated.
  auto rec = Actorrec(dir, {"plan", "--config", config, "--batches", "2", "--recommend", "--hardware",
                            dir.File("fitted.toml")});
  INFO(rec.output);
  REQUIRE(rec.code == 0);
  CHECK_THAT(rec.output, Catch::Contains("calibrated"));

  dir.Write("bad/metrics.jsonl", metrics.substr(0, metrics.size() - 30));
  auto bad = Actorrec(dir, {"plan", "--config", config, "--calibrate", dir.File("bad"), "--hardware", hardware});
  CHECK(bad.code == 1);
  CHECK_THAT(bad.output, Catch::Contains(dir.File("bad/metrics.jsonl") + ":5: not a metrics event"));
}
