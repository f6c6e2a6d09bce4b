// Real `actorrec node` processes on 127.0.0.1, started from one topology:
// they find each other through CAF's middleman, prove the cluster secret,
// exchange Cap'n Proto heartbeats, train together, and name the member that
// dies; a run split across processes ends with the parameters of the same
// run in one process, bit for bit.
#include <signal.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/cluster/child_process.hpp"
#include "tests/cluster/topology.hpp"

using namespace actorrec::testing;
using namespace std::chrono_literals;

namespace {

constexpr auto kStartup = 20s;  // generous: two cores may be busy with other tests

std::string Topology(uint16_t port_a, uint16_t port_b, const std::string& secret, int join_timeout_ms = 20000) {
  return R"(
[run]
name = "two-process-test"

[model]
kind = "dlrm"
bottom_mlp = [64, 16]
top_mlp = [64, 1]

[dataset]
samples = 4096

[training]
batch_size = 256
epochs = 100000  # runs until the test stops it

[cluster]
secret = ")" + secret + R"("
coordinator = "a"
heartbeat_ms = 100
peer_timeout_ms = 1000
join_timeout_ms = )" + std::to_string(join_timeout_ms) + R"(

[[cluster.member]]
name = "a"
address = "127.0.0.1"
port = )" + std::to_string(port_a) + R"(
roles = ["sampler", "oracle", "embedding"]

[[cluster.member]]
name = "b"
address = "127.0.0.1"
port = )" + std::to_string(port_b) + R"(
roles = ["trainer", "embedding"]
trainers = 2
)";
}

const std::string kSecret = kTestSecret;

struct Cluster {
  TempDir dir;
  uint16_t port_a = FreePort();
  uint16_t port_b = FreePort();
  std::string config = dir.File("topology.toml");

  explicit Cluster(const std::string& secret = kSecret, int join_timeout_ms = 20000) {
    WriteBytes(config, Topology(port_a, port_b, secret, join_timeout_ms));
  }
  std::unique_ptr<ChildProcess> Start(const std::string& member, const std::string& config_path) const {
    return std::make_unique<ChildProcess>(
        std::vector<std::string>{ActorrecBinary(), "node", "--config", config_path, "--member", member},
        dir.File(member + ".log"));
  }
  std::unique_ptr<ChildProcess> Start(const std::string& member) const { return Start(member, config); }
};

// The child's exit code; when it outlives `timeout`, its threads' stacks go
// into the next assertion's message, so a hang in CI says where it hangs.
std::optional<int> ExitCodeOrStacks(ChildProcess& p, std::chrono::milliseconds timeout) {
  auto code = p.WaitExit(timeout);
  if (!code) UNSCOPED_INFO("the process did not exit in time; its threads:\n" << p.Stacks());
  return code;
}

}  // namespace

TEST_CASE("two nodes join, exchange heartbeats, and the coordinator names the member that was killed",
          "[cluster]") {
  Cluster c;
  auto a = c.Start("a");
  auto b = c.Start("b");
  INFO("log of a:\n" << a->Log() << "\nlog of b:\n" << b->Log());
  REQUIRE(a->WaitForLog("cluster ready: 2 member(s), 10 actors registered", kStartup));
  REQUIRE(a->WaitForLog("first heartbeat from member 'b'", 5s));
  REQUIRE(b->WaitForLog("first heartbeat answered by 'a'", 5s));
  REQUIRE(b->WaitForLog("joined coordinator 'a' at 127.0.0.1:" + std::to_string(c.port_a), 1s));

  b->Signal(SIGKILL);
  REQUIRE(b->WaitExit(5s) == 128 + SIGKILL);
  auto code = ExitCodeOrStacks(*a, 10s);
  INFO("log of a after the kill:\n" << a->Log());
  REQUIRE(code == 3);
  REQUIRE_THAT(a->Log(), Catch::Contains("member 'b' (127.0.0.1:" + std::to_string(c.port_b) +
                                         ", trainer+embedding) lost: connection lost"));
  REQUIRE_THAT(a->Log(), Catch::Matches("[\\s\\S]*last completed batch: (none|[0-9]+)[\\s\\S]*"));
}

TEST_CASE("the member left behind names the coordinator that was killed", "[cluster]") {
  Cluster c;
  auto a = c.Start("a");
  auto b = c.Start("b");
  INFO("log of a:\n" << a->Log() << "\nlog of b:\n" << b->Log());
  REQUIRE(a->WaitForLog("cluster ready", kStartup));
  a->Signal(SIGKILL);
  auto code = ExitCodeOrStacks(*b, 10s);
  INFO("log of b after the kill:\n" << b->Log());
  REQUIRE(code == 3);
  REQUIRE_THAT(b->Log(), Catch::Contains("coordinator 'a' at 127.0.0.1:" + std::to_string(c.port_a) + " lost"));
}

// SIGTERM to the coordinator with --checkpoint-dir: the cluster stops at a
// batch boundary after a checkpoint there (the members' shards write their
// files), and the coordinator says how to resume.
TEST_CASE("a coordinator stopped by SIGTERM checkpoints the cluster where it stopped", "[cluster]") {
  Cluster c;
  const std::string ck = c.dir.File("ck");
  auto start = [&](const std::string& member) {
    return std::make_unique<ChildProcess>(
        std::vector<std::string>{ActorrecBinary(), "node", "--config", c.config, "--member", member,
                                 "--checkpoint-dir", ck, "--checkpoint-every", "4"},
        c.dir.File(member + ".log"));
  };
  auto a = start("a");
  auto b = start("b");
  // Running past its first checkpoint (not a timing: the file appears).
  for (int i = 0; i < 12000 && !std::filesystem::exists(ck + "/LATEST") && a->running(); ++i) {
    std::this_thread::sleep_for(10ms);
  }
  INFO("log of a:\n" << a->Log() << "\nlog of b:\n" << b->Log());
  REQUIRE(std::filesystem::exists(ck + "/LATEST"));
  a->Signal(SIGTERM);
  const auto a_code = ExitCodeOrStacks(*a, 60s);
  const auto b_code = ExitCodeOrStacks(*b, 60s);
  INFO("log of a at the end:\n" << a->Log() << "\nlog of b at the end:\n" << b->Log());
  REQUIRE(a_code == 128 + SIGTERM);
  CHECK(b_code == 0);
  std::smatch m;
  const std::string log = a->Log();
  REQUIRE(std::regex_search(log, m, std::regex("stopped by signal 15 after batch ([0-9]+)")));
  const std::string stopped_at = m[1].str();
  CHECK(std::regex_search(log, std::regex("checkpoint (on stop|periodic) after " + stopped_at + " batches: " + ck)));
  CHECK_THAT(log, Catch::Contains("resume with: actorrec node --config " + c.config + " --member <each member> --resume " + ck));
  CHECK(ReadBytes(ck + "/LATEST") == "batch-" + stopped_at + "\n");
}

TEST_CASE("a node with another cluster secret is refused and the coordinator keeps waiting", "[cluster]") {
  Cluster c;
  const std::string wrong = c.dir.File("wrong-secret.toml");
  WriteBytes(wrong, Topology(c.port_a, c.port_b, "not-the-cluster-secret-at-all"));
  auto a = c.Start("a");
  auto intruder = c.Start("b", wrong);
  INFO("log of a:\n" << a->Log() << "\nlog of the intruder:\n" << intruder->Log());
  auto code = intruder->WaitExit(kStartup);
  REQUIRE(code == 4);
  REQUIRE_THAT(intruder->Log(), Catch::Contains("refused by coordinator 'a'"));
  REQUIRE_THAT(intruder->Log(), Catch::Contains("does not match; give every member the same cluster.secret"));
  // The secret keys the cluster's TLS: the intruder never reaches the join.
  REQUIRE_THAT(intruder->Log(), Catch::Contains("certificate not issued under this cluster's secret"));
  REQUIRE(a->WaitForLog("refused connection from 127.0.0.1:", 5s));
  REQUIRE_THAT(a->Log(), Catch::Contains("another cluster secret?"));
  REQUIRE(a->running());

  // The right member still gets in afterwards.
  auto b = c.Start("b");
  REQUIRE(a->WaitForLog("cluster ready", kStartup));
  a->Signal(SIGTERM);
  const auto a_code = ExitCodeOrStacks(*a, 10s);
  const auto b_code = ExitCodeOrStacks(*b, 10s);
  INFO("log of a at the end:\n" << a->Log() << "\nlog of b at the end:\n" << b->Log());
  REQUIRE(a_code == 128 + SIGTERM);  // as `actorrec train` stopped by a signal
  REQUIRE(b_code == 0);
  REQUIRE_THAT(b->Log(), Catch::Contains("stopping: signal"));
}

// Each member's trainers report their GEMM kernels when they join; the
// coordinator warns when two trainer members differ (here: oneDNN held to
// AVX2 on one of them), since the run then cannot equal a one-process run
// bit for bit.
TEST_CASE("the coordinator warns when trainer members compute with different GEMM kernels", "[cluster]") {
  std::ifstream cpuinfo("/proc/cpuinfo");
  const std::string flags((std::istreambuf_iterator<char>(cpuinfo)), std::istreambuf_iterator<char>());
  if (flags.find(" avx512f") == std::string::npos) {
    WARN("not checked: needs a CPU with AVX-512, so that ONEDNN_MAX_CPU_ISA=AVX2 changes the kernels");
    return;
  }
  Cluster c;
  std::string topology = Topology(c.port_a, c.port_b, kSecret);
  const std::string a_roles = "roles = [\"sampler\", \"oracle\", \"embedding\"]";
  topology.replace(topology.find(a_roles), a_roles.size(),
                   "roles = [\"sampler\", \"oracle\", \"embedding\", \"trainer\"]\ntrainers = 2");
  WriteBytes(c.config, topology);
  auto a = c.Start("a");
  setenv("ONEDNN_MAX_CPU_ISA", "AVX2", 1);
  auto b = c.Start("b");
  unsetenv("ONEDNN_MAX_CPU_ISA");
  const bool ready = a->WaitForLog("cluster ready", kStartup);
  INFO("log of a:\n" << a->Log() << "\nlog of b:\n" << b->Log());
  REQUIRE(ready);
  // Either member may join first (b connects as soon as a listens), and the
  // warning names the later one first, so only its parts are checked.
  REQUIRE_THAT(a->Log(), Catch::Contains("will not equal a one-process run bit for bit"));
  REQUIRE_THAT(a->Log(), Catch::Contains("with cpu (oneDNN sgemm avx2,"));
  REQUIRE_THAT(a->Log(), Catch::Contains("with cpu (oneDNN sgemm avx512"));
  REQUIRE_THAT(a->Log(), Catch::Contains("ONEDNN_MAX_CPU_ISA=AVX2"));
  a->Signal(SIGTERM);
  CHECK(ExitCodeOrStacks(*a, 10s).has_value());
  CHECK(ExitCodeOrStacks(*b, 10s).has_value());
}

TEST_CASE("a member that never joins is named when the join timeout passes", "[cluster]") {
  Cluster c(kSecret, 1500);
  auto a = c.Start("a");
  auto code = ExitCodeOrStacks(*a, kStartup);
  INFO("log of a:\n" << a->Log());
  REQUIRE(code == 5);
  REQUIRE_THAT(a->Log(), Catch::Contains("member 'b' (127.0.0.1:" + std::to_string(c.port_b) +
                                         ", trainer+embedding) did not join within 1500 ms"));
  REQUIRE_THAT(a->Log(), Catch::Contains("--member b"));
}

TEST_CASE("a run split across processes (sampler + oracle, 2 shards, 2 and 4 trainers) equals the one-process run",
          "[cluster]") {
  // Both trainer counts with the default mode; a mode planned with lookahead
  // and two planned without, once each; the trainers sum over the TLS
  // collective, once over Gloo (cluster.collective = "gloo"), once with
  // "auto" (the ranks agree through the coordinator that CPU trainers
  // cannot use NCCL, and fall back to TLS); once with
  // dedup groups over sessions (IKJT from the sampler's member, bag groups
  // in the plans to the trainers' members).
  const auto [trainers, mode, collective, dedup] = GENERATE(table<uint32_t, std::string, std::string, bool>(
      {{2, "lrpp_delayed", "tls", false},
       {4, "lrpp_delayed", "tls", false},
       {4, "lrpp", "tls", false},
       {2, "static_hot", "tls", false},
       {4, "ideal", "tls", false},
       {4, "lrpp_delayed", "gloo", false},
       {2, "lrpp_delayed", "auto", false},
       {2, "lrpp_delayed", "tls", true}}));
  INFO("trainers " << trainers << ", mode " << mode << ", collective " << collective << ", dedup " << dedup);
  TempDir dir;
  const std::string dataset_extra = dedup ? "[dataset.generator]\nsession_length = 8\nsession_dup = 0.9\n"
                                            "[[dataset.dedup_groups]]\ntables = [0, 1, 2, 3]\n"
                                            "[[dataset.dedup_groups]]\ntables = [5, 7]\n"
                                          : "";

  // The reference: every role in one process, the same ranks and shards.
  const std::string single_dir = dir.File("single");
  WriteBytes(dir.File("single.toml"),
             SplitRun(single_dir, Member("one", 0, "\"all\"",
                                         "trainers = " + std::to_string(trainers) + "\nembedding_shards = 2\n"),
                      mode, 6144, "", dataset_extra));
  ChildProcess single({ActorrecBinary(), "train", "--config", dir.File("single.toml")}, dir.File("single.log"));
  INFO("log of the one-process run:\n" << single.Log());
  REQUIRE(single.WaitExit(120s) == 0);
  const std::string expected = DigestIn(ReadBytes(single_dir + "/metrics.jsonl"));
  REQUIRE(expected.size() == 16);
  const std::vector<std::string> expected_evals = EvalsIn(ReadBytes(single_dir + "/metrics.jsonl"));
  REQUIRE(expected_evals.size() == 3);  // after batches 5 and 10, and at the end

  // The cluster: a (sampler, oracle), e (both shards), and trainer members
  // of two ranks each.
  const std::string split_dir = dir.File("split");
  std::string members = Member("a", FreePort(), "\"sampler\", \"oracle\"") +
                        Member("e", FreePort(), "\"embedding\"", "embedding_shards = 2\n");
  std::vector<std::string> names = {"a", "e"};
  for (uint32_t m = 0; m < trainers / 2; ++m) {
    names.push_back(std::string("t").append(std::to_string(m)));  // appends: GCC 12 -Wrestrict false positive
    members += Member(names.back(), FreePort(), "\"trainer\"", "trainers = 2\n");
  }
  WriteBytes(dir.File("split.toml"),
             SplitRun(split_dir, members, mode, 6144,
                      collective == "tls" ? "" : "collective = \"" + collective + "\"\n", dataset_extra));
  std::vector<std::unique_ptr<ChildProcess>> procs;
  for (const auto& name : names) {
    procs.push_back(std::make_unique<ChildProcess>(
        std::vector<std::string>{ActorrecBinary(), "node", "--config", dir.File("split.toml"), "--member", name},
        dir.File(name + ".log")));
  }
  for (size_t i = 0; i < procs.size(); ++i) {
    const std::optional<int> code = procs[i]->WaitExit(120s);
    // Every member's log, once each has ended (or not), says why.
    for (size_t k = 0; k < procs.size(); ++k) UNSCOPED_INFO("log of " << names[k] << ":\n" << procs[k]->Log());
    REQUIRE(code == std::optional<int>(0));
  }
  REQUIRE_THAT(procs[0]->Log(), Catch::Contains("training with the cluster's actor pipeline"));
  // The trainer members' ranks joined the collective the config names.
  for (size_t i = 2; i < procs.size(); ++i) {
    INFO("log of " << names[i] << ":\n" << procs[i]->Log());
    if (collective == "auto") {
      // Here because the trainers run the CPU backend; on a GPU machine
      // because the member hosts two trainers on one GPU.
      CHECK_THAT(procs[i]->Log(), Catch::Contains("cluster.collective = \"auto\": summing over TLS, not NCCL (rank 0: "));
    }
    if (collective != "gloo") {
      CHECK_THAT(procs[i]->Log(), Catch::Contains("tls collective: rank " + std::to_string(2 * (i - 2)) + " of " +
                                                  std::to_string(trainers) + " listens on 127.0.0.1:"));
    } else {
      CHECK_THAT(procs[i]->Log(), Catch::Contains("plain, unauthenticated TCP"));
      CHECK_THAT(procs[i]->Log(), !Catch::Contains("tls collective"));
    }
  }
  REQUIRE(DigestIn(ReadBytes(split_dir + "/metrics.jsonl")) == expected);
  // The coordinator evaluates with rows and dense parameters asked of the
  // other processes: the same AUC, log-loss and accuracy, bit for bit.
  CHECK(EvalsIn(ReadBytes(split_dir + "/metrics.jsonl")) == expected_evals);
}

TEST_CASE("a cluster run checkpoints and resumes where it stopped, equal to the run that never stopped", "[cluster]") {
  TempDir dir;
  const std::string mode = "lrpp_delayed";
  const std::string single_dir = dir.File("single");
  WriteBytes(dir.File("single.toml"),
             SplitRun(single_dir, Member("one", 0, "\"all\"", "trainers = 2\nembedding_shards = 2\n"), mode));
  ChildProcess single({ActorrecBinary(), "train", "--config", dir.File("single.toml")}, dir.File("single.log"));
  INFO("log of the one-process run:\n" << single.Log());
  REQUIRE(single.WaitExit(120s) == 0);
  const std::string expected = DigestIn(ReadBytes(single_dir + "/metrics.jsonl"));
  REQUIRE(expected.size() == 16);

  // Every member on the same command line; the shards (on e) write their
  // files into the directory the coordinator names.
  const std::vector<std::string> names = {"a", "e", "t0"};
  const std::string members = Member("a", FreePort(), "\"sampler\", \"oracle\"") +
                              Member("e", FreePort(), "\"embedding\"", "embedding_shards = 2\n") +
                              Member("t0", FreePort(), "\"trainer\"", "trainers = 2\n");
  auto run = [&](const std::string& name, const std::vector<std::vector<std::string>>& flags) {
    WriteBytes(dir.File(name + ".toml"), SplitRun(dir.File(name), members, mode));
    std::vector<std::unique_ptr<ChildProcess>> procs;
    for (size_t i = 0; i < names.size(); ++i) {
      std::vector<std::string> argv = {ActorrecBinary(), "node", "--config", dir.File(name + ".toml"), "--member",
                                       names[i]};
      argv.insert(argv.end(), flags[i].begin(), flags[i].end());
      procs.push_back(std::make_unique<ChildProcess>(argv, dir.File(name + "-" + names[i] + ".log")));
    }
    return procs;
  };
  const std::string ck = dir.File("ck");
  const std::vector<std::string> save = {"--checkpoint-dir", ck, "--checkpoint-every", "5"};
  {
    auto procs = run("first", {save, save, save});
    for (size_t i = 0; i < procs.size(); ++i) {
      INFO("log of " << names[i] << ":\n" << procs[i]->Log());
      REQUIRE(procs[i]->WaitExit(120s) == 0);
    }
    CHECK(DigestIn(ReadBytes(dir.File("first") + "/metrics.jsonl")) == expected);  // checkpoints change nothing
  }
  // Batches 5, 10 and 12 were saved, the two newest kept: as if the run had
  // been lost after its checkpoint at batch 10.
  REQUIRE(ReadBytes(ck + "/LATEST") == "batch-12\n");
  WriteBytes(ck + "/LATEST", "batch-10\n");

  const std::vector<std::string> resume = {"--resume", ck};
  {
    auto procs = run("resumed", {resume, resume, resume});
    for (size_t i = 0; i < procs.size(); ++i) {
      INFO("log of " << names[i] << ":\n" << procs[i]->Log());
      REQUIRE(procs[i]->WaitExit(120s) == 0);
    }
    INFO("log of a:\n" << procs[0]->Log());
    CHECK_THAT(procs[0]->Log(), Catch::Contains("resumed from " + ck + " after batch 10"));
    CHECK(DigestIn(ReadBytes(dir.File("resumed") + "/metrics.jsonl")) == expected);
  }
  {
    // A member started without --resume is named, and nothing trains.
    auto procs = run("mixed", {resume, resume, {}});
    const auto code = ExitCodeOrStacks(*procs[0], 120s);
    INFO("log of a:\n" << procs[0]->Log());
    CHECK(code != 0);
    CHECK_THAT(procs[0]->Log(), Catch::Contains("trainer[0] starts at batch 0, the coordinator at batch 10"));
    for (size_t i = 1; i < procs.size(); ++i) CHECK(procs[i]->WaitExit(60s).has_value());
  }
}

namespace {

// A shipped example topology (configs/examples/) made to run on 127.0.0.1
// with free ports, small data and `coordinator` as cluster.coordinator.
// Line by line: every member's address and port, the listed keys of the
// listed sections, and the added keys after their section's header.
std::string ExampleOnLoopback(const std::string& text, const std::string& out_dir, const std::string& coordinator) {
  const std::map<std::string, std::map<std::string, std::string>> set = {
      {"[dataset]", {{"samples", "6144"}, {"eval_samples", "1024"}, {"row_scale", "0.001"}}},
      {"[training]", {{"batch_size", "512"}, {"cache_rows", "8192"}}},
  };
  // Replaced (dropped where they are, written after the header): generous
  // timeouts, so that a loaded machine does not lose a member.
  const std::map<std::string, std::string> add = {
      {"[run]", "output_dir = \"" + out_dir + "\"\n"},
      {"[cluster]", "coordinator = \"" + coordinator + "\"\njoin_timeout_ms = 30000\npeer_timeout_ms = 30000\n"},
  };
  const std::map<std::string, std::vector<std::string>> drop = {
      {"[cluster]", {"coordinator", "join_timeout_ms", "peer_timeout_ms"}}};
  std::istringstream lines(text);
  std::string out, section;
  for (std::string line; std::getline(lines, line);) {
    const std::string key = line.substr(0, line.find_first_of(" ="));
    if (line.starts_with("[")) {
      section = line.substr(0, line.find(']') + (line.starts_with("[[") ? 2 : 1));
      out += line + "\n";
      if (auto it = add.find(section); it != add.end()) out += it->second;
      continue;
    }
    if (auto d = drop.find(section);
        d != drop.end() && std::find(d->second.begin(), d->second.end(), key) != d->second.end()) {
      continue;
    }
    if (section == "[[cluster.member]]" && key == "address") {
      out += "address = \"127.0.0.1\"\n";
    } else if (section == "[[cluster.member]]" && key == "port") {
      out += "port = " + std::to_string(FreePort()) + "\n";
    } else if (auto s = set.find(section); s != set.end() && s->second.count(key) != 0) {
      out += key + " = " + s->second.at(key) + "\n";
    } else {
      out += line + "\n";
    }
  }
  return out;
}

// The [[cluster.member]] names of a topology, in order.
std::vector<std::string> MemberNames(const std::string& text) {
  std::vector<std::string> names;
  std::istringstream lines(text);
  bool in_member = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("[")) in_member = line.starts_with("[[cluster.member]]");
    if (in_member && line.starts_with("name = \"")) names.push_back(line.substr(8, line.find('"', 8) - 8));
  }
  return names;
}

}  // namespace

// Periodic checkpoints must not change a cluster run: the driver pauses the
// oracle before flushing the caches, wherever the oracle runs. Every shipped
// example topology with every member as the coordinator (so also one that
// is not the oracle's member): without checkpoints, with --checkpoint-every,
// and resumed from the first checkpoint (the one a late pause spoiled; its
// content shows it even when the run's own digest happens to survive).
TEST_CASE("periodic checkpoints leave every layout of the example topologies with the digest of no checkpoints",
          "[cluster]") {
  for (const char* example : {"loopback_two_process.toml", "two_hosts.toml"}) {
    const std::string text = ReadBytes(std::string(ACTORREC_SOURCE_DIR) + "/configs/examples/" + example);
    const std::vector<std::string> names = MemberNames(text);
    REQUIRE(names.size() == 2);
    std::string expected;
    for (const std::string& coordinator : names) {
      TempDir dir;
      WriteBytes(dir.File("topology.toml"), ExampleOnLoopback(text, dir.File("out"), coordinator));
      const std::string ck = dir.File("ck");
      for (const std::string& how : std::vector<std::string>{"plain", "checkpoints", "resumed"}) {
        CAPTURE(example, coordinator, how);
        if (how == "resumed") WriteBytes(ck + "/LATEST", "batch-6\n");  // 6 and 12 (the end) were saved
        std::vector<std::unique_ptr<ChildProcess>> procs;
        for (const std::string& name : names) {
          std::vector<std::string> argv = {ActorrecBinary(), "node", "--config", dir.File("topology.toml"), "--member",
                                           name};
          if (how == "checkpoints") argv.insert(argv.end(), {"--checkpoint-dir", ck, "--checkpoint-every", "6"});
          if (how == "resumed") argv.insert(argv.end(), {"--resume", ck});
          procs.push_back(std::make_unique<ChildProcess>(argv, dir.File(how + "-" + name + ".log")));
        }
        for (size_t i = 0; i < procs.size(); ++i) {
          const int code = ExitCodeOrStacks(*procs[i], 120s).value_or(-1);
          INFO("log of " << names[i] << ":\n" << procs[i]->Log());
          REQUIRE(code == 0);
        }
        if (how == "checkpoints") REQUIRE(ReadBytes(ck + "/LATEST") == "batch-12\n");
        const std::string digest = DigestIn(ReadBytes(dir.File("out") + "/metrics.jsonl"));
        REQUIRE(digest.size() == 16);
        if (expected.empty()) expected = digest;
        CHECK(digest == expected);
      }
    }
  }
}
