// Recovery (cluster.max_restarts > 0): real `actorrec node` agents on
// 127.0.0.1 whose worker processes are killed with SIGKILL at a seeded random
// batch; each agent restarts its worker, the cluster resumes from its newest
// snapshot, and the run ends with the parameters and evaluations of a run
// that never failed, bit for bit. Without --checkpoint-dir the snapshots are
// in memory (each agent's store, replicated to the next member); the run's
// output directory gets no snapshot.
#include <signal.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
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

constexpr int kBatches = 24;  // 12288 samples of 512
// Snapshots every 5 batches, evaluations every 5 (training.eval_every):
// evaluations fall on global batches (multiples of eval_every) wherever a
// run resumed, so each recovered run's evaluation must equal the
// uninterrupted run's of the same batch.
constexpr int kSnapshotEvery = 5;

// sampler + oracle on the coordinator a, both shards on e, two trainer
// ranks (with their cache partitions and sync schedulers) on t.
const std::vector<std::string> kNames = {"a", "e", "t"};

std::string Members() {
  return Member("a", FreePort(), "\"sampler\", \"oracle\"") +
         Member("e", FreePort(), "\"embedding\"", "embedding_shards = 2\n") +
         Member("t", FreePort(), "\"trainer\"", "trainers = 2\n");
}

std::string Recovery(int max_restarts) {
  return "max_restarts = " + std::to_string(max_restarts) +
         "\nrestart_backoff_ms = 100\nsnapshot_every = " + std::to_string(kSnapshotEvery) + "\n";
}

struct Reference {
  std::string digest;
  std::vector<std::string> evals;
};

// The same run in one process, never interrupted (computed once).
const Reference& Uninterrupted() {
  static const Reference ref = [] {
    TempDir dir;
    WriteBytes(dir.File("single.toml"),
               SplitRun(dir.File("single"), Member("one", 0, "\"all\"", "trainers = 2\nembedding_shards = 2\n"),
                        "lrpp_delayed", kBatches * 512));
    ChildProcess single({ActorrecBinary(), "train", "--config", dir.File("single.toml")}, dir.File("single.log"));
    const auto code = single.WaitExit(120s);
    INFO("log of the one-process run:\n" << single.Log());
    REQUIRE(code == 0);
    const std::string metrics = ReadBytes(dir.File("single") + "/metrics.jsonl");
    return Reference{DigestIn(metrics), EvalsIn(metrics)};
  }();
  return ref;
}

// The global batches done, from the batch lines of metrics.jsonl since its
// last recovery line (or its start); 0 before the file exists.
int BatchesDone(const std::string& metrics_path) {
  std::ifstream lines(metrics_path);  // absent before the first batch
  int base = 0, count = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("{\"event\":\"batch\"")) ++count;
    std::smatch s;
    if (line.starts_with("{\"event\":\"recovery\"") &&
        std::regex_search(line, s, std::regex("\"snapshot_batch\":([0-9]+)"))) {
      base = std::stoi(s[1].str());
      count = 0;
    }
  }
  return base + count;
}

class RecoveringCluster {
 public:
  // extra: more flags for every member (--checkpoint-dir DIR: snapshots on
  // disk instead of in memory).
  // spare: a spare member "s" too (roles = ["spare"]), which takes over a
  // member missing for half of join_timeout_ms after a loss.
  explicit RecoveringCluster(int max_restarts = 3, int join_timeout_ms = 30000, std::vector<std::string> extra = {},
                             bool spare = false)
      : extra_(std::move(extra)), names_(kNames) {
    std::string text = SplitRun(dir_.File("out"), Members() + (spare ? Member("s", 0, "\"spare\"") : ""),
                                "lrpp_delayed", kBatches * 512, Recovery(max_restarts));
    text.replace(text.find("join_timeout_ms = 30000"), 23, "join_timeout_ms = " + std::to_string(join_timeout_ms));
    if (spare) names_.push_back("s");
    WriteBytes(dir_.File("topology.toml"), text);
    for (const auto& name : names_) StartAgent(name);
  }
  // Starts `name`'s agent (again: a new agent after the old one ended, with
  // a new log).
  void StartAgent(const std::string& name) {
    std::vector<std::string> argv = {ActorrecBinary(), "node", "--config", dir_.File("topology.toml"), "--member", name};
    argv.insert(argv.end(), extra_.begin(), extra_.end());
    const int n = ++agents_[name];
    if (auto it = procs_.find(name); it != procs_.end()) old_logs_ += "log of " + name + ":\n" + it->second->Log() + "\n";
    procs_[name] = std::make_unique<ChildProcess>(argv, dir_.File(name + (n > 1 ? "." + std::to_string(n) : "") + ".log"));
  }
  ChildProcess& agent(const std::string& name) { return *procs_.at(name); }
  std::string metrics_path() const { return dir_.File("out") + "/metrics.jsonl"; }
  std::string metrics() const { return ReadBytes(metrics_path()); }
  std::string snapshots() const { return dir_.File("out") + "/snapshots"; }
  std::string Logs() const {
    std::string all = old_logs_;
    for (const auto& [name, p] : procs_) all += "log of " + name + ":\n" + p->Log() + "\n";
    return all;
  }

  // The pid of `member`'s `start`-th worker, from its agent's log.
  pid_t WorkerPid(const std::string& member, int start) {
    const std::string tail = " started (start " + std::to_string(start) + ")";
    const bool started = agent(member).WaitForLog(tail, 60s);
    INFO(Logs());
    REQUIRE(started);
    std::smatch m;
    const std::string log = agent(member).Log();
    REQUIRE(std::regex_search(log, m, std::regex("worker pid ([0-9]+)" + std::regex_replace(tail, std::regex("[()]"), "\\$&"))));
    return static_cast<pid_t>(std::stol(m[1].str()));
  }

  // Kills `member`'s start-th worker once the run has done `batch` batches
  // (polled from metrics.jsonl: not a timing).
  void KillAt(const std::string& member, int start, int batch) {
    const pid_t pid = WorkerPid(member, start);
    for (int i = 0; i < 60000 && BatchesDone(metrics_path()) < batch; ++i) std::this_thread::sleep_for(2ms);
    INFO(Logs());
    REQUIRE(BatchesDone(metrics_path()) >= batch);
    REQUIRE(kill(pid, SIGKILL) == 0);
  }

  // Kills `member`'s first worker, then its agent, once the run has done
  // `batch` batches: the member lost with its host.
  void KillHostAt(const std::string& member, int batch) {
    KillAt(member, 1, batch);
    agent(member).Signal(SIGKILL);
    REQUIRE(agent(member).WaitExit(10s) == std::optional<int>(128 + SIGKILL));
  }

  // Every agent's exit code.
  std::map<std::string, std::optional<int>> WaitAll() {
    std::map<std::string, std::optional<int>> codes;
    for (const auto& name : names_) codes[name] = procs_.at(name)->WaitExit(180s);
    return codes;
  }

 private:
  TempDir dir_;
  std::vector<std::string> extra_;
  std::vector<std::string> names_;  // the agents started
  std::map<std::string, std::unique_ptr<ChildProcess>> procs_;
  std::map<std::string, int> agents_;  // agents started per member
  std::string old_logs_;               // of agents that were replaced
};

void CheckSameAsUninterrupted(const RecoveringCluster& c) {
  const Reference& ref = Uninterrupted();
  REQUIRE(ref.digest.size() == 16);
  const std::string metrics = c.metrics();
  INFO("metrics.jsonl:\n" << metrics);
  CHECK(DigestIn(metrics) == ref.digest);
  // Every evaluation, replayed ones included, equals the uninterrupted run's
  // at the same batch, and the last one is the same.
  const std::vector<std::string> evals = EvalsIn(metrics);
  REQUIRE(!evals.empty());
  for (const auto& e : evals) CHECK(std::find(ref.evals.begin(), ref.evals.end(), e) != ref.evals.end());
  CHECK(evals.back() == ref.evals.back());
}

int SeededBatch(uint32_t seed, int lo, int hi) {
  std::mt19937 rng(seed);
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}

}  // namespace

TEST_CASE("SIGKILL of the worker hosting any role at a random batch: the run recovers to the same digest and AUC",
          "[recovery]") {
  // t: trainers, cache partitions, sync schedulers; e: embedding shards;
  // a: sampler, oracle and the coordinator itself.
  const std::string victim = GENERATE(as<std::string>{}, "t", "e", "a");
  const int batch = SeededBatch(static_cast<uint32_t>(victim[0]), 5, 15);
  CAPTURE(victim, batch);
  RecoveringCluster c;
  c.KillAt(victim, 1, batch);
  const auto codes = c.WaitAll();
  INFO(c.Logs());
  for (const auto& [name, code] : codes) CHECK(code == std::optional<int>(0));
  CHECK_THAT(c.agent(victim).Log(), Catch::Contains("killed by signal 9") && Catch::Contains("restart 1 of 3"));
  const std::string metrics = c.metrics();
  if (victim != "a") {
    // The coordinator saw the loss and recorded it; a lost coordinator is
    // recorded by its agent's log only (no one else writes the metrics).
    CHECK_THAT(metrics, Catch::Contains("{\"event\":\"failure\",\"member\":\"" + victim + "\""));
  }
  std::smatch m;
  REQUIRE(std::regex_search(metrics, m, std::regex("\"event\":\"recovery\",[^\n]*\"snapshot_batch\":([0-9]+),\"reached_batch\":([0-9]+),\"batches_replayed\":([0-9]+)")));
  CHECK(std::stoi(m[1].str()) % kSnapshotEvery == 0);
  CHECK(std::stoi(m[1].str()) <= batch);
  CHECK(std::stoi(m[2].str()) >= batch);
  // The snapshot came from memory (the coordinator's agent's store), and
  // nothing was written to disk for it; the agents removed their stores.
  if (std::stoi(m[1].str()) > 0) {
    CHECK_THAT(metrics, Catch::Contains("\"event\":\"recovery\",\"snapshot\":\"/dev/shm/actorrec-snapshots-a-"));
  }
  CHECK(!std::filesystem::exists(c.snapshots()));
  for (const auto& name : kNames) {
    CHECK(!std::filesystem::exists("/dev/shm/actorrec-snapshots-" + name + "-" + std::to_string(c.agent(name).pid())));
  }
  CheckSameAsUninterrupted(c);
}

TEST_CASE("two members killed one after the other, the second at a snapshot's batch, recover to the same digest",
          "[recovery]") {
  RecoveringCluster c;
  c.KillAt("e", 1, SeededBatch(24, 4, 8));
  // The trainer's restarted worker (start 2), killed at the batch of a
  // snapshot of the recovered run: at the pause that writes it, or just
  // after.
  c.KillAt("t", 2, 15);
  const auto codes = c.WaitAll();
  INFO(c.Logs());
  for (const auto& [name, code] : codes) CHECK(code == std::optional<int>(0));
  CHECK_THAT(c.agent("t").Log(), Catch::Contains("killed by signal 9") && Catch::Contains("restart 1 of 3"));
  const std::string metrics = c.metrics();
  size_t recoveries = 0;
  for (size_t at = metrics.find("\"event\":\"recovery\""); at != std::string::npos;
       at = metrics.find("\"event\":\"recovery\"", at + 1)) {
    ++recoveries;
  }
  CHECK(recoveries >= 2);
  CheckSameAsUninterrupted(c);
}

TEST_CASE("a member that keeps dying is given up after cluster.max_restarts with a clear error, the snapshot kept",
          "[recovery]") {
  // Snapshots on disk (--checkpoint-dir): the last good one outlives the
  // agents.
  TempDir ck;
  RecoveringCluster c(1, 8000, {"--checkpoint-dir", ck.File("snapshots")});
  c.KillAt("e", 1, 6);
  c.KillAt("e", 2, 0);
  const auto code = c.agent("e").WaitExit(60s);
  INFO(c.Logs());
  CHECK(code == std::optional<int>(128 + SIGKILL));
  CHECK_THAT(c.agent("e").Log(),
             Catch::Contains("crash 2 is more than cluster.max_restarts = 1: giving up") &&
                 Catch::Contains("the last good snapshot stays in " + ck.File("snapshots")));
  // The others stop once the coordinator gives up waiting for e (its join
  // timeout), and the newest snapshot is complete.
  for (const std::string name : {"a", "t"}) CHECK(c.agent(name).WaitExit(120s).has_value());
  CHECK(c.agent("a").WaitExit(1s) != std::optional<int>(0));
  const std::string latest = ReadBytes(ck.File("snapshots") + "/LATEST");
  REQUIRE(latest.starts_with("batch-"));
  CHECK(std::filesystem::exists(ck.File("snapshots") + "/" + latest.substr(0, latest.size() - 1) + "/dense.safetensors"));
}

TEST_CASE("a member whose agent is killed too, started again by hand, fetches its snapshot from its replica's holder",
          "[recovery]") {
  // e's agent and worker die; its new agent's store is empty, so its
  // worker fetches its shard files from t (the next member: the holder of
  // e's replica) and the dense state, and the run ends as if nothing had
  // happened.
  RecoveringCluster c;
  const int batch = SeededBatch(7, 7, 15);
  CAPTURE(batch);
  c.WorkerPid("e", 1);
  for (int i = 0; i < 60000 && BatchesDone(c.metrics_path()) < batch; ++i) std::this_thread::sleep_for(2ms);
  c.agent("e").Signal(SIGKILL);
  REQUIRE(c.agent("e").WaitExit(10s) == std::optional<int>(128 + SIGKILL));
  c.StartAgent("e");
  const auto codes = c.WaitAll();
  INFO(c.Logs());
  for (const auto& [name, code] : codes) CHECK(code == std::optional<int>(0));
  CHECK_THAT(c.agent("e").Log(), Catch::Contains("fetched shard-0-of-2.ckpt") &&
                                     Catch::Contains("fetched shard-1-of-2.ckpt") && Catch::Contains("from member 't'"));
  CHECK_THAT(c.metrics(), Catch::Contains("\"event\":\"recovery\""));
  CheckSameAsUninterrupted(c);
}

TEST_CASE("the coordinator's agent and worker killed and its agent started again by hand resume from the newest "
          "committed snapshot the others keep",
          "[recovery]") {
  // a's store goes with its agent; e and t keep the coordinator's commit
  // mark, the dense piece (and would keep a's shard files), so the new
  // coordinator resumes from the snapshot it committed last, not from 0.
  RecoveringCluster c;
  const int batch = SeededBatch(11, 7, 15);
  CAPTURE(batch);
  c.KillHostAt("a", batch);
  c.StartAgent("a");
  const auto codes = c.WaitAll();
  INFO(c.Logs());
  for (const auto& [name, code] : codes) CHECK(code == std::optional<int>(0));
  const std::string log = c.agent("a").Log();
  std::smatch m;
  REQUIRE(std::regex_search(log, m, std::regex("resumed from [^\n]* after batch ([0-9]+)")));
  CHECK(std::stoi(m[1].str()) > 0);
  CHECK(std::stoi(m[1].str()) % kSnapshotEvery == 0);
  CHECK_THAT(log, Catch::Contains("fetched dense.safetensors"));
  CheckSameAsUninterrupted(c);
}

TEST_CASE("a member lost for good (agent and worker killed, never started again) is taken over by a spare, "
          "which fetches its shards from the replica holder, and the run ends with the same digest",
          "[recovery]") {
  // e hosts both shards; t keeps their replicas. s waits as a spare; once e
  // has not joined the restarted coordinator for half its join timeout, s's
  // worker starts again as e (at its own address) and fetches e's pieces.
  // Pieces travel in 64 KiB chunks here (several per shard file).
  ::setenv("ACTORREC_SNAPSHOT_CHUNK_BYTES", "65536", 1);
  RecoveringCluster c(3, 8000, {}, true);  // the spare takes over after 4 s
  ::unsetenv("ACTORREC_SNAPSHOT_CHUNK_BYTES");
  const int batch = SeededBatch(13, 7, 15);
  CAPTURE(batch);
  c.KillHostAt("e", batch);
  const auto codes = c.WaitAll();
  INFO(c.Logs());
  CHECK(codes.at("e") == std::optional<int>(128 + SIGKILL));
  for (const std::string name : {"a", "t", "s"}) CHECK(codes.at(name) == std::optional<int>(0));
  CHECK_THAT(c.agent("a").Log(), Catch::Contains("): spare 's' (127.0.0.1) takes over its roles"));
  const std::string log = c.agent("s").Log();
  CHECK_THAT(log, Catch::Contains("given the roles of a member lost for good: 'e'") &&
                      Catch::Contains("spare 's' plays member 'e'"));
  std::smatch m;
  REQUIRE(std::regex_search(log, m, std::regex("fetched shard-0-of-2.ckpt \\([0-9]+ bytes in ([0-9]+) chunk\\(s\\)\\) from member 't'")));
  CHECK(std::stoi(m[1].str()) > 1);
  CHECK_THAT(log, Catch::Contains("fetched shard-1-of-2.ckpt"));
  CHECK_THAT(c.metrics(), Catch::Contains("\"event\":\"recovery\""));
  CHECK_THAT(c.metrics(), Catch::Contains("{\"event\":\"takeover\",\"member\":\"e\",\"spare\":\"s\","
                                          "\"spare_address\":\"127.0.0.1\",\"waited_ms\":4000,\"unix_ms\":"));
  CheckSameAsUninterrupted(c);
}

namespace {

// Whether `pid` is gone (or a zombie nobody reaped yet), within `timeout`.
bool Gone(pid_t pid, std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  do {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) return true;
    const size_t paren = line.rfind(')');
    if (paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z') return true;
    std::this_thread::sleep_for(10ms);
  } while (std::chrono::steady_clock::now() < until);
  return false;
}

}  // namespace

TEST_CASE("a killed agent takes its worker with it, and an agent passes SIGTERM to its worker and is not restarted",
          "[recovery]") {
  RecoveringCluster c;
  const pid_t t_worker = c.WorkerPid("t", 1);
  for (int i = 0; i < 60000 && BatchesDone(c.metrics_path()) < 2; ++i) std::this_thread::sleep_for(2ms);
  c.agent("t").Signal(SIGKILL);
  INFO(c.Logs());
  CHECK(c.agent("t").WaitExit(10s) == std::optional<int>(128 + SIGKILL));
  CHECK(Gone(t_worker, 10s));  // PR_SET_PDEATHSIG: no orphan
  // The others lost t: their agents restart them to rejoin, and they wait
  // for t. A stop signal to an agent goes to its worker, which ends, and the
  // agent ends with it instead of restarting it.
  const pid_t a_worker = c.WorkerPid("a", 2);
  const pid_t e_worker = c.WorkerPid("e", 2);
  c.agent("a").Signal(SIGTERM);
  c.agent("e").Signal(SIGTERM);
  REQUIRE(c.agent("a").WaitExit(60s).has_value());
  REQUIRE(c.agent("e").WaitExit(60s).has_value());
  for (const std::string name : {"a", "e"}) {
    CHECK_THAT(c.agent(name).Log(), Catch::Contains("Terminated received; passing it to worker pid") &&
                                        Catch::Contains("after the stop signal; the agent ends too"));
    CHECK_THAT(c.agent(name).Log(), !Catch::Contains("started (start 3)"));
  }
  CHECK(Gone(a_worker, 10s));
  CHECK(Gone(e_worker, 10s));
}

TEST_CASE("a member killed in the middle of a snapshot, after another member committed it, rolls all back to the one before",
          "[recovery]") {
  // The drill (snapshot_keeper.cpp): t's keeper kills its worker when it
  // is asked to commit snapshot 10, after e committed it and before the
  // coordinator did; the coordinator's LATEST is still 5, so every member
  // (e too, which drops its batch-10) resumes from 5.
  setenv("ACTORREC_DRILL_KILL_AT_COMMIT", "1", 1);
  RecoveringCluster c;
  unsetenv("ACTORREC_DRILL_KILL_AT_COMMIT");
  c.WorkerPid("t", 1);
  for (int i = 0; i < 60000 && BatchesDone(c.metrics_path()) < 6; ++i) std::this_thread::sleep_for(2ms);
  REQUIRE(BatchesDone(c.metrics_path()) < kSnapshotEvery * 2);
  WriteBytes("/dev/shm/actorrec-snapshots-t-" + std::to_string(c.agent("t").pid()) + "/drill-kill-at-commit", "");
  const auto codes = c.WaitAll();
  INFO(c.Logs());
  for (const auto& [name, code] : codes) CHECK(code == std::optional<int>(0));
  CHECK_THAT(c.agent("t").Log(), Catch::Contains("killed by signal 9") && Catch::Contains("restart 1 of 3"));
  const std::string metrics = c.metrics();
  std::smatch m;
  REQUIRE(std::regex_search(metrics, m, std::regex("\"event\":\"recovery\",[^\n]*\"snapshot_batch\":([0-9]+),\"reached_batch\":([0-9]+)")));
  CHECK(m[1].str() == "5");
  CHECK(std::stoi(m[2].str()) >= 10);
  CheckSameAsUninterrupted(c);
}
