// The bench programs' command lines (tools/bench): each answers --help at
// once with its usage, and a bad argument with an error naming it and exit
// code 2, instead of running with a default, running the whole benchmark or
// crashing (oracle_bench 0 and abc used to segfault).
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "tests/cluster/child_process.hpp"

using namespace actorrec::testing;
using namespace std::chrono_literals;

namespace {

std::string BenchBinary(const std::string& name) {
  const char* dir = std::getenv("ACTORREC_BENCH_DIR");
  REQUIRE(dir != nullptr);
  return std::string(dir) + "/" + name;
}

// Sets ACTORREC_BENCH_DIR for the actorrec children of one test; puts the
// suite's value (meson's) back at the end.
class BenchDirOverride {
 public:
  explicit BenchDirOverride(const std::string& dir) {
    if (const char* old = std::getenv("ACTORREC_BENCH_DIR")) old_ = old;
    ::setenv("ACTORREC_BENCH_DIR", dir.c_str(), 1);
  }
  ~BenchDirOverride() {
    if (old_.empty()) ::unsetenv("ACTORREC_BENCH_DIR");
    else ::setenv("ACTORREC_BENCH_DIR", old_.c_str(), 1);
  }

 private:
  std::string old_;
};

}  // namespace

TEST_CASE("every bench program prints its usage for --help and exits 0 without running", "[cli][bench]") {
  const std::string name = GENERATE(as<std::string>{}, "oracle_bench", "train_bench", "format_bench", "data_bench",
                                    "gemm_bench", "collective_bench", "soak_bench", "recd_bench");
  TempDir dir;
  // 20 s: the usage is instant, any benchmark run takes longer.
  const CliRun run = RunProgram(dir, {BenchBinary(name), "--help"}, "out.log", 20s);
  INFO(name << ": " << run.output);
  CHECK(run.code == 0);
  CHECK(run.output.find("Usage: " + name) != std::string::npos);
  CHECK(run.output.find("--help") != std::string::npos);
}

TEST_CASE("a bad argument of a bench program is an error naming it, exit code 2", "[cli][bench]") {
  struct Bad {
    std::vector<std::string> args;
    std::string named;  // what the message must name
  };
  const auto [name, bad] = GENERATE(table<std::string, Bad>({
      {"oracle_bench", {{"0"}, "measured"}},
      {"oracle_bench", {{"abc"}, "abc"}},
      {"oracle_bench", {{"5", "99"}, "row"}},
      {"oracle_bench", {{"--bogus"}, "--bogus"}},
      {"train_bench", {{"2"}, "batches"}},
      {"train_bench", {{"24", "1.5"}, "row_scale"}},
      {"format_bench", {{"--samples", "abc"}, "--samples"}},
      {"format_bench", {{"--reps"}, "--reps"}},
      {"data_bench", {{"--session-dup", "2"}, "--session-dup"}},
      {"gemm_bench", {{"-3"}, "batch"}},
      {"collective_bench", {{"1024", "1"}, "ranks"}},
      {"soak_bench", {{"10", "8", "fast"}, "mode"}},
      {"recd_bench", {{"--factors", "4,0"}, "--factors"}},
      {"recd_bench", {{"--batch", "100", "--factors", "3"}, "--batch"}},
  }));
  TempDir dir;
  std::vector<std::string> argv = {BenchBinary(name)};
  argv.insert(argv.end(), bad.args.begin(), bad.args.end());
  const CliRun run = RunProgram(dir, argv, "out.log", 20s);
  INFO(name << ": " << run.output);
  CHECK(run.code == 2);
  CHECK(run.output.find(bad.named) != std::string::npos);
}

TEST_CASE("actorrec bench refuses a missing or unknown benchmark with exit code 2", "[cli][bench]") {
  TempDir dir;
  CliRun none = Actorrec(dir, {"bench"});
  CHECK(none.code == 2);
  CHECK_THAT(none.output, Catch::Contains("name what to run"));
  CliRun unknown = Actorrec(dir, {"bench", "fast"});
  CHECK(unknown.code == 2);
  CHECK_THAT(unknown.output, Catch::Contains("fast"));
}

TEST_CASE("actorrec bench runs a bench program and keeps its output, CSV and SVG chart", "[cli][bench]") {
  TempDir dir;
  // A stand-in oracle_bench (ACTORREC_BENCH_DIR): prints a line and writes
  // the CSV it is asked for, as the real one does, in no time.
  const std::string fake = dir.Write("bin/oracle_bench",
                                     "#!/bin/sh\necho \"stand-in oracle_bench $*\"\n"
                                     "while [ $# -gt 1 ]; do if [ \"$1\" = --csv ]; then csv=$2; fi; shift; done\n"
                                     "printf 'batch,W,L,alpha,ids,kernel,made,M_samples_per_s\\n"
                                     "16384,8,200,1.05,scattered,avx512,ahead,3.5\\n"
                                     "2048,8,200,1.05,scattered,avx512,ahead,1.25\\n' > \"$csv\"\n");
  REQUIRE(::chmod(fake.c_str(), 0755) == 0);
  const CliRun run = [&] {
    BenchDirOverride bench_dir(dir.File("bin"));
    return Actorrec(dir, {"bench", "oracle", "--out", dir.File("out")});
  }();
  INFO(run.output);
  REQUIRE(run.code == 0);
  CHECK_THAT(run.output, Catch::Contains("stand-in oracle_bench 10 0 --csv"));
  CHECK_THAT(ReadBytes(dir.File("out/oracle_bench.txt")), Catch::Contains("stand-in oracle_bench"));
  CHECK_THAT(ReadBytes(dir.File("out/oracle_bench.csv")), Catch::Contains("M_samples_per_s"));
  const std::string svg = ReadBytes(dir.File("out/oracle_bench.svg"));
  CHECK_THAT(svg, Catch::StartsWith("<svg"));
  CHECK_THAT(svg, Catch::Contains("16384 8 200 1.05 scattered avx512 ahead"));
  CHECK_THAT(svg, Catch::Contains(">3.5<"));
  CHECK_THAT(svg, Catch::Contains(">1.25<"));

  // A bench program that fails fails the command, naming it.
  dir.Write("bin/oracle_bench", "#!/bin/sh\necho broken >&2\nexit 3\n");
  const CliRun broken = [&] {
    BenchDirOverride bench_dir(dir.File("bin"));
    return Actorrec(dir, {"bench", "oracle", "--out", dir.File("out")}, "broken.log");
  }();
  CHECK(broken.code == 1);
  CHECK_THAT(broken.output, Catch::Contains("oracle_bench exited with code 3"));
}

TEST_CASE("actorrec bench train --vs-pytorch runs the PyTorch DLRM beside train_bench and prints the ratio",
          "[cli][bench]") {
  TempDir dir;
  // Stand-ins (ACTORREC_BENCH_DIR): train_bench says it trained on the CPU
  // and writes an ideal row of 1000 samples/s; dlrm_torch.py prints its
  // arguments and a rate of 400 samples/s.
  const std::string bench = dir.Write("bin/train_bench",
                                      "#!/bin/sh\necho \"backend: cpu (stand-in)\"\n"
                                      "while [ $# -gt 1 ]; do if [ \"$1\" = --csv ]; then csv=$2; fi; shift; done\n"
                                      "printf 'mode,driver,samples_per_s\\nno_cache,actors,10\\n"
                                      "ideal,lockstep,5\\nideal,actors,1000\\n' > \"$csv\"\n");
  REQUIRE(::chmod(bench.c_str(), 0755) == 0);
  dir.Write("bin/dlrm_torch.py",
            "import sys\nprint('stand-in torch', ' '.join(sys.argv[1:]))\n"
            "print('dlrm_torch device=cpu batch=2048 iters=6 samples_per_s=400.0 ms_per_iter=5120.00')\n");
  const CliRun run = [&] {
    BenchDirOverride bench_dir(dir.File("bin"));
    return Actorrec(dir, {"bench", "train", "--vs-pytorch", "--out", dir.File("out")});
  }();
  INFO(run.output);
  REQUIRE(run.code == 0);
  // The script runs on the device train_bench used, at its batch and
  // row_scale, as many threads as its trainers, its first 2 batches untimed.
  CHECK_THAT(run.output, Catch::Contains("stand-in torch --device cpu --batch 2048 --row-scale 0.01 --warmup 2 "
                                         "--iters 6 --threads 2"));
  CHECK_THAT(run.output, Catch::Contains("vs PyTorch (cpu, batch 2048): actorrec 1000 samples/s (train_bench, ideal), "
                                         "PyTorch 400 samples/s (dlrm_torch.py): actorrec/PyTorch = 2.500"));
  CHECK_THAT(ReadBytes(dir.File("out/vs_pytorch.txt")), Catch::Contains("actorrec/PyTorch = 2.500"));

  // Without PyTorch the script exits 77: skipped, said, not a failure.
  dir.Write("bin/dlrm_torch.py", "import sys\nprint('dlrm_torch: skipped: no torch', file=sys.stderr)\nsys.exit(77)\n");
  const CliRun skipped = [&] {
    BenchDirOverride bench_dir(dir.File("bin"));
    return Actorrec(dir, {"bench", "train", "--vs-pytorch", "--out", dir.File("out2")}, "skipped.log");
  }();
  INFO(skipped.output);
  CHECK(skipped.code == 0);
  CHECK_THAT(skipped.output, Catch::Contains("vs PyTorch: skipped: dlrm_torch.py found no PyTorch to run"));

  // Only beside train_bench.
  const CliRun wrong = Actorrec(dir, {"bench", "oracle", "--vs-pytorch"}, "wrong.log");
  CHECK(wrong.code == 2);
  CHECK_THAT(wrong.output, Catch::Contains("--vs-pytorch"));
}

TEST_CASE("actorrec bench recd runs the real recd_bench and charts its embedding speed-up per DedupeFactor",
          "[cli][bench]") {
  TempDir dir;
  const CliRun run = Actorrec(dir, {"bench", "recd", "--out", dir.File("out")}, "out.log", 120s);
  INFO(run.output);
  REQUIRE(run.code == 0);
  const std::string csv = ReadBytes(dir.File("out/recd_bench.csv"));
  CHECK_THAT(csv, Catch::StartsWith("factor,model_df,measured_df,emb_ms_off,emb_ms_on,emb_speedup,"));
  // The three factors of the small size, each a row (its measured factor
  // equals the model's on the generator's sessions).
  for (const char* row : {"\n1,1.000000,1.000000,", "\n4,4.000000,4.000000,", "\n16,16.000000,16.000000,"}) {
    CHECK_THAT(csv, Catch::Contains(row));
  }
  const std::string svg = ReadBytes(dir.File("out/recd_bench.svg"));
  CHECK_THAT(svg, Catch::StartsWith("<svg"));
  CHECK_THAT(svg, Catch::Contains("embedding-part speed-up"));
}

TEST_CASE("actorrec bench --profile writes a hardware profile with every key", "[cli][bench]") {
  TempDir dir;
  const CliRun run = Actorrec(dir, {"bench", "--profile", "--out", dir.File("out")});
  INFO(run.output);
  REQUIRE(run.code == 0);
  const std::string toml = ReadBytes(dir.File("out/hardware.toml"));
  for (const char* key : {"[hardware]", "gemm_gflops =", "memory_gbps =", "network_gbit =", "network_latency_us =",
                          "host_device_gbps =", "trainer_memory_gib =", "shard_memory_gib =", "host_cores =",
                          "shard_row_us ="}) {
    CHECK_THAT(toml, Catch::Contains(key));
  }
}

// gpu_slot_bench (built only with CUDA): its usage, its argument errors,
// and without a usable device exit 77 saying so, which `actorrec bench gpu`
// reports as skipped (exit 0). On a GPU machine it measures instead.
TEST_CASE("gpu_slot_bench answers --help and bad arguments, and exits 77 without a GPU", "[cli][bench]") {
  const std::string exe = BenchBinary("gpu_slot_bench");
  struct stat info {};
  if (::stat(exe.c_str(), &info) != 0) {
    WARN("gpu_slot_bench is not built (no CUDA in this build): nothing to check");
    return;
  }
  TempDir dir;
  const CliRun help = RunProgram(dir, {exe, "--help"}, "help.log", 20s);
  CHECK(help.code == 0);
  CHECK_THAT(help.output, Catch::Contains("Usage: gpu_slot_bench") && Catch::Contains("--rows"));
  for (const auto& [args, named] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--rows", "0"}, "--rows"}, {{"--batches", "2"}, "--batches"}, {{"--bogus"}, "--bogus"}}) {
    std::vector<std::string> argv = {exe};
    argv.insert(argv.end(), args.begin(), args.end());
    const CliRun bad = RunProgram(dir, argv, "bad.log", 20s);
    INFO(bad.output);
    CHECK(bad.code == 2);
    CHECK_THAT(bad.output, Catch::Contains(named));
  }
  const CliRun run = RunProgram(dir, {exe, "--rows", "1024", "--skip-dlrm", "--reps", "1"}, "run.log", 60s);
  INFO(run.output);
  if (run.code == 77) {
    CHECK_THAT(run.output, Catch::Contains("gpu_slot_bench: no usable CUDA device (") &&
                               Catch::Contains("nothing measured"));
    const CliRun bench = Actorrec(dir, {"bench", "gpu", "--out", dir.File("out")}, "bench.log", 60s);
    INFO(bench.output);
    CHECK(bench.code == 0);
    CHECK_THAT(bench.output, Catch::Contains("gpu_slot_bench: skipped, no usable CUDA device"));
  } else {
    CHECK(run.code == 0);
    CHECK_THAT(run.output, Catch::Contains("slot gather kernel") && Catch::Contains("slot scatter kernel") &&
                               Catch::Contains("H2D through the staging ring"));
  }
}
