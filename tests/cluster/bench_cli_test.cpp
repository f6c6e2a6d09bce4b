// The bench programs' command lines (tools/bench): each answers --help at
// once with its usage, and a bad argument with an error naming it and exit
// code 2, instead of running with a default, running the whole benchmark or
// crashing (oracle_bench 0 and abc used to segfault).
#include <catch2/catch.hpp>

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

}  // namespace

TEST_CASE("every bench program prints its usage for --help and exits 0 without running", "[cli][bench]") {
  const std::string name = GENERATE(as<std::string>{}, "oracle_bench", "train_bench", "format_bench", "data_bench",
                                    "gemm_bench", "collective_bench", "soak_bench");
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
  }));
  TempDir dir;
  std::vector<std::string> argv = {BenchBinary(name)};
  argv.insert(argv.end(), bad.args.begin(), bad.args.end());
  const CliRun run = RunProgram(dir, argv, "out.log", 20s);
  INFO(name << ": " << run.output);
  CHECK(run.code == 2);
  CHECK(run.output.find(bad.named) != std::string::npos);
}
