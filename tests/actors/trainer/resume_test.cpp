// Checkpoints (checkpoint.hpp): a run stopped after k batches, saved, and
// resumed from the checkpoint ends with parameters bitwise equal to the run
// that never stopped, in every mode and with either driver; a damaged or
// mismatched checkpoint is refused, naming the file or the config key.
#include <catch2/catch.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <tuple>

#include "actors/run/checkpoint.hpp"
#include "actors/run/lockstep_run.hpp"
#include "actors/run/pipeline_run.hpp"
#include "configs/config.hpp"
#include "tests/actors/trainer/resume_runs.hpp"
#include "tests/actors/trainer/test_config.hpp"
#include "tests/support/temp_dir.hpp"

namespace actorrec::trainer {
namespace {

namespace fs = std::filesystem;

using ::actorrec::testing::TempDir;

void FlipByte(const fs::path& file, size_t from_end) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(0, std::ios::end);
  const auto size = static_cast<size_t>(f.tellg());
  const size_t at = size - 1 - from_end % size;
  f.seekg(static_cast<std::streamoff>(at));
  char c = 0;
  f.read(&c, 1);
  c = static_cast<char>(c ^ 0x20);
  f.seekp(static_cast<std::streamoff>(at));
  f.write(&c, 1);
}

// Flips the lowest bit of the first character of `key`'s value in the
// dense file's JSON header (a digit stays a digit: '3' becomes '2').
void FlipMetadataBit(const fs::path& file, const std::string& key) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const size_t at = bytes.find("\"" + key + "\":\"");
  REQUIRE(at != std::string::npos);
  const size_t value = at + key.size() + 4;
  f.clear();
  f.seekp(static_cast<std::streamoff>(value));
  const char c = static_cast<char>(bytes[value] ^ 1);
  f.write(&c, 1);
}

// A process id that no process has now: a child that has exited.
pid_t DeadPid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  REQUIRE(pid > 0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return pid;
}

}  // namespace

TEST_CASE("a resumed run equals the run that never stopped, bitwise", "[trainer][checkpoint]") {
  for (const char* mode : {"lrpp_delayed", "lrpp", "replicated", "no_cache", "static_hot", "ideal"}) {
    for (int trainers : {1, 2}) {
      for (int stop : {1, 4, 9}) {
        Case c;
        c.mode = mode;
        c.trainers = trainers;
        c.dense = "adam";
        c.sparse = "adam";
        const config::Config cfg = config::ParseConfig(ConfigText(c), "resume.toml");
        CAPTURE(mode, trainers, stop);
        const uint64_t straight = Straight(cfg);
        TempDir dir;
        CHECK(LockstepResumed(cfg, stop, dir.path()) == straight);
        TempDir pdir;
        CHECK(PipelineResumed(cfg, stop, pdir.path()) == straight);
      }
    }
  }
}

TEST_CASE("a checkpoint at an epoch boundary resumes in the next epoch", "[trainer][checkpoint]") {
  Case c;
  c.mode = "lrpp_delayed";
  c.epochs = 2;
  c.sparse = "adagrad";
  const config::Config cfg = config::ParseConfig(ConfigText(c), "resume.toml");
  const uint64_t straight = Straight(cfg);
  TempDir dir;
  CHECK(LockstepResumed(cfg, c.batches, dir.path()) == straight);
  TempDir pdir;
  CHECK(PipelineResumed(cfg, c.batches, pdir.path()) == straight);
}

TEST_CASE("checkpoints keep the two newest and LATEST names the newest", "[trainer][checkpoint]") {
  Case c;
  const config::Config cfg = config::ParseConfig(ConfigText(c), "resume.toml");
  auto run = LockstepRun::Create(cfg);
  REQUIRE(run.ok());
  TempDir dir;
  for (int i = 0; i < 4; ++i) {
    StepAll(**run, 1);
    REQUIRE((*run)->SaveCheckpoint(dir.path()).ok());
  }
  std::ifstream latest(fs::path(dir.path()) / "LATEST");
  std::string name;
  std::getline(latest, name);
  CHECK(name == "batch-4");
  CHECK(fs::exists(fs::path(dir.path()) / "batch-4"));
  CHECK(fs::exists(fs::path(dir.path()) / "batch-3"));
  CHECK_FALSE(fs::exists(fs::path(dir.path()) / "batch-2"));
}

TEST_CASE("a damaged or mismatched checkpoint is refused, naming the file or key", "[trainer][checkpoint]") {
  Case c;
  c.sparse = "adagrad";
  const config::Config cfg = config::ParseConfig(ConfigText(c), "resume.toml");
  TempDir dir;
  {
    auto run = LockstepRun::Create(cfg);
    REQUIRE(run.ok());
    StepAll(**run, 3);
    REQUIRE((*run)->SaveCheckpoint(dir.path()).ok());
  }
  const fs::path ckpt = fs::path(dir.path()) / "batch-3";
  SECTION("no checkpoint") {
    auto run = LockstepRun::Resume(cfg, (fs::path(dir.path()) / "nowhere").string());
    CHECK(run.status().code() == Status::Code::kNotFound);
    CHECK_THAT(run.status().message(), Catch::Contains("LATEST"));
  }
  SECTION("another seed") {
    Case other = c;
    other.seed = 8;
    auto run = LockstepRun::Resume(config::ParseConfig(ConfigText(other), "resume.toml"), dir.path());
    CHECK(run.status().code() == Status::Code::kInvalidArgument);
    CHECK_THAT(run.status().message(), Catch::Contains("run.seed"));
  }
  SECTION("another sparse optimizer") {
    Case other = c;
    other.sparse = "sgd";
    auto run = LockstepRun::Resume(config::ParseConfig(ConfigText(other), "resume.toml"), dir.path());
    CHECK_THAT(run.status().message(), Catch::Contains("optimizer.sparse"));
  }
  SECTION("a flipped byte in the dense file") {
    for (size_t at : {size_t{0}, size_t{100}}) {
      FlipByte(ckpt / "dense.safetensors", at);
      auto run = LockstepRun::Resume(cfg, dir.path());
      CHECK_FALSE(run.ok());
      CHECK_THAT(run.status().message(), Catch::Contains("dense.safetensors"));
      FlipByte(ckpt / "dense.safetensors", at);
    }
  }
  SECTION("a flipped byte in a shard file") {
    for (size_t at : {size_t{3}, size_t{200}}) {
      FlipByte(ckpt / "shard-1-of-2.ckpt", at);
      auto run = LockstepRun::Resume(cfg, dir.path());
      CHECK_FALSE(run.ok());
      CHECK_THAT(run.status().message(), Catch::Contains("shard-1-of-2.ckpt"));
      FlipByte(ckpt / "shard-1-of-2.ckpt", at);
    }
  }
}


TEST_CASE("a one-bit flip in the checkpoint's position is refused, naming the file", "[trainer][checkpoint]") {
  Case c;
  c.epochs = 2;
  const config::Config cfg = config::ParseConfig(ConfigText(c), "resume.toml");
  TempDir dir;
  {
    auto run = LockstepRun::Create(cfg);
    REQUIRE(run.ok());
    StepAll(**run, 13);  // epoch 1, batch 3
    REQUIRE((*run)->SaveCheckpoint(dir.path()).ok());
  }
  const fs::path dense = fs::path(dir.path()) / "batch-13" / "dense.safetensors";
  for (const char* key : {"position.batch", "position.epoch", "position.batches"}) {
    CAPTURE(key);
    FlipMetadataBit(dense, key);
    auto run = LockstepRun::Resume(cfg, dir.path());
    CHECK(run.status().code() == Status::Code::kCorruption);
    CHECK_THAT(run.status().message(), Catch::Contains("dense.safetensors"));
    FlipMetadataBit(dense, key);
  }
  // LATEST naming another checkpoint than the one it holds.
  fs::rename(fs::path(dir.path()) / "batch-13", fs::path(dir.path()) / "batch-12");
  std::ofstream(fs::path(dir.path()) / "LATEST", std::ios::trunc) << "batch-12\n";
  auto moved = LockstepRun::Resume(cfg, dir.path());
  CHECK(moved.status().code() == Status::Code::kCorruption);
  CHECK_THAT(moved.status().message(), Catch::Contains("after 13 batches"));
}

TEST_CASE("a checkpoint is refused with a config whose tables differ, naming the file and key",
          "[trainer][checkpoint]") {
  Case c;
  const std::string text = ConfigText(c);
  const config::Config cfg = config::ParseConfig(text, "resume.toml");
  TempDir dir;
  {
    auto run = LockstepRun::Create(cfg);
    REQUIRE(run.ok());
    StepAll(**run, 3);
    REQUIRE((*run)->SaveCheckpoint(dir.path()).ok());
  }
  for (const auto& [from, to, key] : {std::tuple<std::string, std::string, std::string>{
                                          "table_rows = [50, 300, 2000, 7]", "table_rows = [50, 300, 2001, 7]",
                                          "tables.rows"},
                                      {"dense_features = 3", "dense_features = 2", "model.dense_features"}}) {
    CAPTURE(to);
    std::string other = text;
    other.replace(other.find(from), from.size(), to);
    auto parts = RunParts::Create(config::ParseConfig(other, "resume.toml"));
    REQUIRE(parts.ok());
    auto loaded = LoadRunCheckpoint(dir.path(), parts->get());
    CHECK(loaded.status().code() == Status::Code::kInvalidArgument);
    CHECK_THAT(loaded.status().message(), Catch::Contains("dense.safetensors") && Catch::Contains(key));
  }
}

TEST_CASE("writing or reading a checkpoint removes the temporaries of dead writers on this host",
          "[trainer][checkpoint]") {
  Case c;
  const config::Config cfg = config::ParseConfig(ConfigText(c), "resume.toml");
  TempDir dir;
  char host_name[256] = {};
  REQUIRE(::gethostname(host_name, sizeof host_name - 1) == 0);
  const std::string host = host_name;
  const fs::path d(dir.path());
  auto leave = [&](const std::string& name) {
    fs::create_directories(d / name);
    std::ofstream(d / name / "dense.safetensors") << "partial";
    return d / name;
  };
  const std::string dead = std::to_string(DeadPid());
  const fs::path old_form = leave("batch-5.tmp-" + dead);
  const fs::path ours_dead = leave("batch-6.tmp-" + host + "-" + dead);
  const fs::path live = leave("batch-7.tmp-" + host + "-1");  // init: alive
  const fs::path elsewhere = leave("batch-8.tmp-another.host.invalid-" + dead);
  auto run = LockstepRun::Create(cfg);
  REQUIRE(run.ok());
  StepAll(**run, 2);
  REQUIRE((*run)->SaveCheckpoint(dir.path()).ok());
  CHECK_FALSE(fs::exists(old_form));
  CHECK_FALSE(fs::exists(ours_dead));
  CHECK(fs::exists(live));
  CHECK(fs::exists(elsewhere));
  CHECK(fs::exists(d / "batch-2"));

  const fs::path later = leave("batch-9.tmp-" + host + "-" + dead);
  auto resumed = LockstepRun::Resume(cfg, dir.path());
  REQUIRE(resumed.ok());
  CHECK_FALSE(fs::exists(later));
  CHECK(fs::exists(live));
}

}  // namespace actorrec::trainer
