// Checkpoints from the command line: train with --checkpoint-dir, resume
// from a mid-run checkpoint with --resume to the same parameters, and score
// with predict.
#include <signal.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "tests/cluster/child_process.hpp"
#include "tests/support/one_process_cluster.hpp"

using namespace actorrec::testing;
using namespace std::chrono_literals;

namespace {

const std::string kConfig = std::string(R"([run]
name = "ck"
seed = 5
[model]
kind = "deepfm"
embedding_dim = 8
deep_mlp = [16, 1]
[optimizer]
dense = "adam"
dense_lr = 0.001
sparse = "adam"
sparse_lr = 0.01
[dataset]
source = "generated"
preset = "custom"
table_rows = [100, 1000, 5000]
dense_features = 4
samples = 20480
eval_samples = 2048
[training]
mode = "lrpp_delayed"
batch_size = 512
epochs = 1
eval_every = 10
)") + OneProcessCluster(2, 2);

std::string Digest(const TempDir& dir) {
  const std::string digest = DigestIn(ReadBytes(dir.File("runs/ck/metrics.jsonl")));
  REQUIRE(digest.size() == 16);
  return digest;
}

}  // namespace

TEST_CASE("train --resume from a mid-run checkpoint ends where the whole run ends; predict scores", "[cli]") {
  TempDir dir;
  std::ofstream(dir.File("ck.toml")) << kConfig;
  auto whole = Actorrec(dir, {"train", "-c", "ck.toml", "--checkpoint-dir", "ck", "--checkpoint-every", "15"},
                        "whole.log");
  INFO(whole.output);
  REQUIRE(whole.code == 0);
  REQUIRE_THAT(whole.output, Catch::Contains("checkpoint periodic after 30 batches: ck"));
  REQUIRE_THAT(whole.output, Catch::Contains("checkpoint final after 40 batches: ck"));
  const std::string digest = Digest(dir);

  // Back to the checkpoint after batch 30, as if the run had died there.
  std::ofstream(dir.File("ck/LATEST"), std::ios::trunc) << "batch-30\n";
  auto resumed = Actorrec(dir, {"train", "-c", "ck.toml", "--resume", "ck"}, "resumed.log");
  INFO(resumed.output);
  REQUIRE(resumed.code == 0);
  REQUIRE_THAT(resumed.output, Catch::Contains("resumed from ck after batch 30"));
  REQUIRE_THAT(resumed.output, Catch::Contains("summary: 10 batches"));
  CHECK(Digest(dir) == digest);

  auto predict = Actorrec(dir, {"predict", "-c", "ck.toml", "--checkpoint", "ck", "--out", "p.csv"}, "predict.log");
  INFO(predict.output);
  REQUIRE(predict.code == 0);
  REQUIRE_THAT(predict.output, Catch::Contains("scored 2048 samples with the checkpoint after batch 30"));
  std::ifstream csv(dir.File("p.csv"));
  std::string header, first;
  REQUIRE(std::getline(csv, header));
  CHECK(header == "label,probability");
  REQUIRE(std::getline(csv, first));
  CHECK(std::regex_match(first, std::regex("[01],0\\.[0-9]+")));
}

TEST_CASE("a run resumed between evaluations evaluates at the whole run's batches, with its results", "[cli]") {
  // Checkpoints after batch 25 (and the final 40); evaluations every 10. A
  // resumed run must evaluate after global batches 30 and 40, as the whole
  // run did, not 10 batches after it resumed (35).
  TempDir dir;
  std::ofstream(dir.File("ck.toml")) << kConfig;
  auto whole = Actorrec(dir, {"train", "-c", "ck.toml", "--checkpoint-dir", "ck", "--checkpoint-every", "25"},
                        "whole.log");
  INFO(whole.output);
  REQUIRE(whole.code == 0);
  REQUIRE_THAT(whole.output, Catch::Contains("checkpoint periodic after 25 batches: ck"));
  const std::vector<std::string> whole_evals = EvalsIn(ReadBytes(dir.File("runs/ck/metrics.jsonl")));

  std::ofstream(dir.File("ck/LATEST"), std::ios::trunc) << "batch-25\n";
  auto resumed = Actorrec(dir, {"train", "-c", "ck.toml", "--resume", "ck"}, "resumed.log");
  INFO(resumed.output);
  REQUIRE(resumed.code == 0);
  REQUIRE_THAT(resumed.output, Catch::Contains("resumed from ck after batch 25"));
  // metrics.jsonl keeps both attempts: the resumed one's evaluations are the
  // lines after its "attempt" line.
  const std::string metrics = ReadBytes(dir.File("runs/ck/metrics.jsonl"));
  const size_t second = metrics.rfind("{\"event\":\"attempt\"");
  REQUIRE(second != std::string::npos);
  REQUIRE(second > 0);
  const std::vector<std::string> resumed_evals = EvalsIn(metrics.substr(second));
  std::vector<std::string> expected;
  for (const std::string& e : whole_evals) {
    if (e.find("\"batches\":30,") != std::string::npos || e.find("\"batches\":40,") != std::string::npos) {
      expected.push_back(e);
    }
  }
  REQUIRE(expected.size() >= 2);
  CHECK(resumed_evals == expected);
}

TEST_CASE("resume refuses a checkpoint made with another config, naming the key", "[cli]") {
  TempDir dir;
  std::ofstream(dir.File("ck.toml")) << kConfig;
  REQUIRE(Actorrec(dir, {"train", "-c", "ck.toml", "--checkpoint-dir", "ck"}, "a.log").code == 0);
  std::string other = kConfig;
  other.replace(other.find("seed = 5"), 8, "seed = 6");
  std::ofstream(dir.File("other.toml")) << other;
  auto r = Actorrec(dir, {"train", "-c", "other.toml", "--resume", "ck"}, "b.log");
  CHECK(r.code != 0);
  CHECK_THAT(r.output, Catch::Contains("run.seed"));
}

TEST_CASE("a damaged checkpoint exits 1 and a mismatched config 2, from train --resume and predict alike", "[cli]") {
  TempDir dir;
  std::ofstream(dir.File("ck.toml")) << kConfig;
  REQUIRE(Actorrec(dir, {"train", "-c", "ck.toml", "--checkpoint-dir", "ck"}, "a.log").code == 0);
  const std::string shard = dir.File("ck/batch-40/shard-1-of-2.ckpt");
  auto flip = [&] {
    std::fstream f(shard, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(200);
    char c = 0;
    f.read(&c, 1);
    c = static_cast<char>(c ^ 0x10);
    f.seekp(200);
    f.write(&c, 1);
  };
  flip();
  auto train = Actorrec(dir, {"train", "-c", "ck.toml", "--resume", "ck"}, "b.log");
  auto predict = Actorrec(dir, {"predict", "-c", "ck.toml", "--checkpoint", "ck", "--out", "p.csv"}, "c.log");
  INFO(train.output << "\n" << predict.output);
  CHECK(train.code == 1);
  CHECK(predict.code == 1);
  CHECK_THAT(train.output, Catch::Contains("shard-1-of-2.ckpt"));
  CHECK_THAT(predict.output, Catch::Contains("shard-1-of-2.ckpt"));
  flip();  // whole again

  std::string other = kConfig;
  other.replace(other.find("table_rows = [100, 1000, 5000]"), 30, "table_rows = [100, 1000, 5001]");
  std::ofstream(dir.File("other.toml")) << other;
  auto train_other = Actorrec(dir, {"train", "-c", "other.toml", "--resume", "ck"}, "d.log");
  auto predict_other =
      Actorrec(dir, {"predict", "-c", "other.toml", "--checkpoint", "ck", "--out", "p.csv"}, "e.log");
  INFO(train_other.output << "\n" << predict_other.output);
  CHECK(train_other.code == 2);
  CHECK(predict_other.code == 2);
  for (const std::string& output : {train_other.output, predict_other.output}) {
    CHECK_THAT(output, Catch::Contains("dense.safetensors") && Catch::Contains("tables.rows = 100,1000,5000") &&
                           Catch::Contains("the config has 100,1000,5001"));
  }
}

// SIGTERM with a checkpoint directory: the run stops at a batch boundary
// after writing a checkpoint there, says where and how to resume, and the
// resumed run loses nothing: it ends where an unstopped run of as many
// batches ends.
TEST_CASE("train stopped by SIGTERM checkpoints where it stopped, and the resumed run loses no batch", "[cli]") {
  for (const bool lockstep : {false, true}) {
    CAPTURE(lockstep);
    TempDir dir;
    std::string endless = kConfig;
    endless.replace(endless.find("epochs = 1"), 10, "epochs = 100000");
    std::ofstream(dir.File("endless.toml")) << endless;
    std::vector<std::string> argv = {ActorrecBinary(), "train", "-c", "endless.toml", "--checkpoint-dir", "ck",
                                     "--checkpoint-every", "5"};
    if (lockstep) argv.push_back("--lockstep");
    uint64_t stopped_at = 0;
    {
      ChildProcess p(argv, dir.File("stopped.log"));
      // Running past its first checkpoint (not a timing: the file appears).
      for (int i = 0; i < 12000 && !std::filesystem::exists(dir.File("ck/LATEST")); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      REQUIRE(std::filesystem::exists(dir.File("ck/LATEST")));
      p.Signal(SIGTERM);
      const auto code = p.WaitExit(120s);
      INFO(p.Log());
      REQUIRE(code == 128 + SIGTERM);
      std::smatch m;
      const std::string log = p.Log();
      REQUIRE(std::regex_search(log, m, std::regex("stopped by signal 15 after batch ([0-9]+)")));
      stopped_at = std::stoull(m[1].str());
      CHECK(stopped_at >= 5);
      // Written on the stop, or by the periodic checkpoint at that batch.
      CHECK(std::regex_search(log, std::regex("checkpoint (on stop|periodic) after " + std::to_string(stopped_at) +
                                              " batches: ck\n")));
      CHECK_THAT(log, Catch::Contains("resume with: actorrec train --config endless.toml --resume ck"));
      CHECK(ReadBytes(dir.File("ck/LATEST")) == "batch-" + std::to_string(stopped_at) + "\n");
    }
    // The same run, resumed to three batches past the stop, against one
    // that never stopped.
    std::string bounded = endless;
    bounded.replace(bounded.find("eval_every = 10"), 15,
                    "eval_every = 10\nmax_batches = " + std::to_string(stopped_at + 3));
    std::ofstream(dir.File("bounded.toml")) << bounded;
    std::vector<std::string> driver;
    if (lockstep) driver.push_back("--lockstep");
    std::vector<std::string> resume = {"train", "-c", "bounded.toml", "--resume", "ck"};
    resume.insert(resume.end(), driver.begin(), driver.end());
    auto resumed = Actorrec(dir, resume, "resumed.log");
    INFO(resumed.output);
    REQUIRE(resumed.code == 0);
    CHECK_THAT(resumed.output, Catch::Contains("resumed from ck after batch " + std::to_string(stopped_at)));
    CHECK_THAT(resumed.output, Catch::Contains("summary: 3 batches"));
    const std::string resumed_digest = Digest(dir);
    std::vector<std::string> straight = {"train", "-c", "bounded.toml"};
    straight.insert(straight.end(), driver.begin(), driver.end());
    auto whole = Actorrec(dir, straight, "straight.log");
    INFO(whole.output);
    REQUIRE(whole.code == 0);
    CHECK(Digest(dir) == resumed_digest);
  }
}
