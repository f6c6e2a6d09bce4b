// `actorrec bench`.
#include "tools/bench_command.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "actors/common/exit_codes.hpp"
#include "planner/hardware_profile.hpp"
#include "tools/bench_profile.hpp"
#include "tools/bench_report.hpp"
#include "tools/bench_simulate.hpp"
#include "tools/bench_vs_pytorch.hpp"

namespace actorrec {
namespace {

namespace fs = std::filesystem;

struct BenchFlags {
  std::string what;
  bool full = false;
  bool profile = false;
  std::string out = "runs/bench";
  std::string hardware;  // simulate: a profile instead of the built-in Bagpipe-like one
  std::string collective = "auto";  // simulate: the trainers' collective
  bool vs_pytorch = false;  // train: also the same DLRM in PyTorch (tools/bench/dlrm_torch.py)
};

// One bench program's run: its arguments at the small and the full size,
// and which CSV column to chart against which label columns.
struct Program {
  std::string name;
  std::vector<std::string> small, full;
  bool csv = false;
  std::string value, unit;
  std::vector<std::string> labels;
  // Needs a GPU: built only with CUDA, exits 77 without a usable device;
  // either way it is skipped with a note, not failed.
  bool gpu = false;
};

int Fail(int code, const std::string& message) {
  std::cerr << "actorrec bench: " << message << "\n";
  return code;
}

fs::path ExeDir() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path(".") : self.parent_path();
}

// The bench programs: $ACTORREC_BENCH_DIR, else tools/bench beside this
// binary (the build tree's layout).
fs::path BenchDir() {
  const char* env = std::getenv("ACTORREC_BENCH_DIR");
  if (env != nullptr && *env != '\0') return env;
  return ExeDir() / "tools" / "bench";
}

bool WriteText(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc | std::ios::binary);
  out << text;
  return static_cast<bool>(out);
}

// The chart of a CSV table: one bar per row, labelled by `labels` joined.
Status Chart(const Program& p, const fs::path& csv_path, const fs::path& svg_path) {
  auto csv = ReadCsv(csv_path.string());
  if (!csv.ok()) return csv.status();
  const int value = csv->Column(p.value);
  if (value < 0) return Status::InvalidArgument(csv_path.string() + ": no column " + p.value);
  std::vector<std::pair<std::string, double>> bars;
  for (const auto& row : csv->rows) {
    std::string label;
    for (const std::string& l : p.labels) {
      const int c = csv->Column(l);
      if (c < 0) return Status::InvalidArgument(csv_path.string() + ": no column " + l);
      label += (label.empty() ? "" : " ") + row[c];
    }
    bars.push_back({label, std::strtod(row[value].c_str(), nullptr)});
  }
  if (!WriteText(svg_path, BarChartSvg(p.name + ": " + p.value, p.unit, bars))) {
    return Status::IoError("cannot write " + svg_path.string());
  }
  return Status::Ok();
}

int RunProgram(const Program& p, const BenchFlags& flags, const fs::path& dir, std::vector<std::string>* written) {
  const fs::path exe = BenchDir() / p.name;
  if (p.gpu && !fs::exists(exe)) {
    std::cout << "\n" << p.name << ": skipped, this build has no CUDA backend (" << exe.string() << " is not built)\n";
    return kExitOk;
  }
  if (!fs::exists(exe)) {
    return Fail(kExitFailure, exe.string() + " is missing: build the bench programs (ninja -C build), or set "
                              "ACTORREC_BENCH_DIR to their folder");
  }
  std::vector<std::string> argv = {exe.string()};
  const auto& args = flags.full ? p.full : p.small;
  argv.insert(argv.end(), args.begin(), args.end());
  const fs::path csv = dir / (p.name + ".csv"), log = dir / (p.name + ".txt");
  if (p.csv) argv.insert(argv.end(), {"--csv", csv.string()});
  std::string shown;
  for (const auto& a : argv) shown += (shown.empty() ? "" : " ") + a;
  std::cout << "\n$ " << shown << "\n";
  auto code = RunShown(argv, log.string());
  if (!code.ok()) return Fail(kExitFailure, code.status().message());
  written->push_back(log.string());
  if (p.gpu && *code == 77) {
    std::cout << p.name << ": skipped, no usable CUDA device (its output: " << log.string() << ")\n";
    return kExitOk;
  }
  if (*code != 0) return Fail(kExitFailure, p.name + " exited with code " + std::to_string(*code) + " (its output: " +
                                                log.string() + ")");
  if (p.csv) {
    written->push_back(csv.string());
    const fs::path svg = dir / (p.name + ".svg");
    if (Status s = Chart(p, csv, svg); !s.ok()) return Fail(kExitFailure, s.message());
    written->push_back(svg.string());
  }
  return kExitOk;
}

std::string ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// After train_bench: the same DLRM in PyTorch on the device train_bench
// used, and the ratio (bench_vs_pytorch.hpp). Without PyTorch the script
// exits 77: skipped, said, and not a failure.
int RunVsPytorch(const Program& train_bench, const BenchFlags& flags, const fs::path& dir,
                 std::vector<std::string>* written) {
  const auto& args = flags.full ? train_bench.full : train_bench.small;
  const fs::path script = BenchDir() / "dlrm_torch.py";
  if (!fs::exists(script)) {
    return Fail(kExitFailure, script.string() + " is missing: build the bench programs (ninja -C build), or set "
                              "ACTORREC_BENCH_DIR to their folder");
  }
  const fs::path csv_path = dir / (train_bench.name + ".csv"), log = dir / "dlrm_torch.txt";
  const bool cuda = RanOnCuda(ReadText(dir / (train_bench.name + ".txt")));
  std::vector<std::string> argv = {"/usr/bin/env", "python3", script.string()};
  for (const std::string& a : TorchArgs(std::stoi(args[0]), args[1], std::stoi(args[2]), cuda)) argv.push_back(a);
  std::string shown;
  for (size_t i = 1; i < argv.size(); ++i) shown += (i > 1 ? " " : "") + argv[i];
  std::cout << "\n$ " << shown << "\n";
  auto code = RunShown(argv, log.string());
  if (!code.ok()) return Fail(kExitFailure, code.status().message());
  written->push_back(log.string());
  const std::string output = ReadText(log);
  if (*code == 77) {
    std::cout << "\nvs PyTorch: skipped: dlrm_torch.py found no PyTorch to run (its output: " << log.string() << ")\n";
    return kExitOk;
  }
  if (*code != 0) {
    return Fail(kExitFailure, "dlrm_torch.py exited with code " + std::to_string(*code) + " (its output: " +
                                  log.string() + ")");
  }
  const auto torch_rate = TorchRate(output);
  if (!torch_rate) return Fail(kExitFailure, log.string() + ": no dlrm_torch result line with samples_per_s");
  auto csv = ReadCsv(csv_path.string());
  if (!csv.ok()) return Fail(kExitFailure, csv.status().message());
  auto ours = IdealRate(*csv, csv_path.string());
  if (!ours.ok()) return Fail(kExitFailure, ours.status().message());
  const std::string line = VsPytorchLine(cuda, *ours, *torch_rate);
  std::cout << "\n" << line << "\n";
  const fs::path result = dir / "vs_pytorch.txt";
  if (!WriteText(result, line + "\n")) return Fail(kExitFailure, "cannot write " + result.string());
  written->push_back(result.string());
  return kExitOk;
}

std::vector<Program> ProgramsOf(const std::string& what) {
  std::vector<Program> programs;
  if (what == "oracle" || what == "all") {
    // Small: the headline row (16384 samples, 8 trainers, L = 200) on 10
    // batches; full: every row on 60 (docs/benchmarks.md).
    programs.push_back({"oracle_bench", {"10", "0"}, {"60"}, true, "M_samples_per_s", "M samples/s",
                        {"batch", "W", "L", "alpha", "ids", "kernel", "made"}});
  }
  if (what == "data" || what == "all") {
    programs.push_back({"format_bench", {"--samples", "131072", "--reps", "1"}, {}, true, "samples_per_s_per_core",
                        "samples/s per core", {"read"}});
    programs.push_back({"data_bench", {"--samples", "50000", "--reps", "1"}, {}, true, "samples_per_s_per_core",
                        "samples/s per core", {"row"}});
  }
  if (what == "train" || what == "all") {
    programs.push_back({"train_bench", {"8", "0.01", "2"}, {"24", "0.05", "2"}, true, "samples_per_s", "samples/s",
                        {"mode", "driver"}});
  }
  if (what == "gpu" || what == "all") {
    // The GPU data plane (issue 22): slot copy kernels and staging against
    // cudaMemcpy, DLRM lrpp_delayed against ideal at batch 16384. Small:
    // fewer rows and DLRM batches.
    Program gpu{"gpu_slot_bench", {"--rows", "262144", "--reps", "10", "--batches", "6"}, {}, true, "ratio",
                "measured / baseline", {"what"}};
    gpu.gpu = true;
    programs.push_back(gpu);
  }
  if (what == "recd" || what == "all") {
    // RecD's dedup groups off against on: small, DedupeFactor 1, 4 and 16 on
    // short runs; full, the sweep docs/benchmarks.md reports.
    programs.push_back({"recd_bench", {"--factors", "1,4,16", "--batches", "4", "--reps", "3"}, {"--reps", "20"}, true,
                        "emb_speedup", "embedding-part speed-up, dedup on vs off", {"factor"}});
  }
  return programs;
}

int RunBench(const BenchFlags& flags) {
  const fs::path dir = flags.out;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Fail(kExitFailure, "cannot create " + dir.string() + ": " + ec.message());
  std::vector<std::string> written;
  if (flags.profile) {
    std::cout << "measuring this machine's hardware profile (a few seconds)…\n";
    auto measured = MeasureProfile();
    if (!measured.ok()) return Fail(kExitFailure, measured.status().message());
    const std::string text = planner::ProfileToToml(measured->profile, "actorrec bench --profile\n" + measured->how);
    const fs::path path = dir / "hardware.toml";
    if (!WriteText(path, text)) return Fail(kExitFailure, "cannot write " + path.string());
    std::cout << text;
    written.push_back(path.string());
  }
  if (!flags.what.empty()) {
    for (const Program& p : ProgramsOf(flags.what)) {
      if (const int code = RunProgram(p, flags, dir, &written); code != kExitOk) return code;
      if (flags.vs_pytorch && p.name == "train_bench") {
        if (const int code = RunVsPytorch(p, flags, dir, &written); code != kExitOk) return code;
      }
    }
    if (flags.what == "cluster" || flags.what == "all") {
      // The testbed's cluster benchmark: a Python script of the source tree
      // (the build tree sits in it), root for its network namespaces.
      const fs::path script = ExeDir().parent_path() / "tools" / "bench" / "cluster_bench.py";
      if (!fs::exists(script)) {
        return Fail(kExitFailure, script.string() + " is missing: run the actorrec of a build tree in the sources");
      }
      if (::geteuid() != 0) {
        std::cout << "\ncluster: skipped, the testbed's network namespaces need root (sudo actorrec bench cluster)\n";
      } else {
        std::vector<std::string> argv = {"/usr/bin/env", "python3", script.string(), "--out",
                                         (dir / "cluster").string()};
        if (!flags.full) argv.push_back("--quick");
        std::cout << "\n$ python3 " << script.string() << " --out " << (dir / "cluster").string()
                  << (flags.full ? "" : " --quick") << "\n";
        auto code = RunShown(argv, (dir / "cluster_bench.txt").string());
        if (!code.ok()) return Fail(kExitFailure, code.status().message());
        written.push_back((dir / "cluster_bench.txt").string());
        if (*code != 0) return Fail(kExitFailure, "cluster_bench.py exited with code " + std::to_string(*code));
        written.push_back((dir / "cluster").string() + "/cluster_bench.{csv,svg}");
      }
    }
    if (flags.what == "simulate" || flags.what == "all") {
      SimulateFlags sim;
      sim.hardware = flags.hardware;
      sim.collective = flags.collective;
      if (flags.full) sim.trainers = {8, 16, 32, 64, 128}, sim.batches = 30;
      if (const int code = RunSimulate(sim, dir, &written); code != kExitOk) return code;
    }
  }
  std::cout << "\nactorrec bench: wrote";
  for (const auto& w : written) std::cout << "\n  " << w;
  std::cout << "\n";
  return kExitOk;
}

}  // namespace

std::function<int()> AddBenchCommand(CLI::App& app) {
  auto flags = std::make_shared<BenchFlags>();
  auto* bench = app.add_subcommand(
      "bench",
      "Run the benchmarks (tools/bench) and show their measured ratios; keep their output, CSV tables and SVG "
      "charts in --out. Small sizes by default (a minute or so), --full for the sizes docs/benchmarks.md reports.");
  bench->add_option("what", flags->what,
                    "oracle, data, train, recd (RecD's dedup groups), gpu (the GPU data plane; skipped without a GPU), cluster "
                    "(root: the network testbed), simulate or all")
      ->check(CLI::IsMember({"oracle", "data", "train", "recd", "gpu", "cluster", "simulate", "all"}));
  bench->add_flag("--full", flags->full, "the documented sizes (minutes to an hour) instead of the small ones");
  bench->add_flag("--profile", flags->profile,
                  "measure this machine's hardware profile (GEMM rate, memory bandwidth, loopback network) into "
                  "OUT/hardware.toml, for `actorrec plan --recommend` (docs/planner.md)");
  bench->add_option("--out,-o", flags->out, "the run directory (default runs/bench)");
  bench->add_flag("--vs-pytorch", flags->vs_pytorch,
                  "train: also run the same DLRM in PyTorch (tools/bench/dlrm_torch.py) on the device train_bench "
                  "used, at its batch and row_scale, and print actorrec's ideal-mode rate over PyTorch's; skipped "
                  "with a message where PyTorch is not importable");
  bench->add_option("--hardware", flags->hardware,
                    "simulate: the hardware profile (TOML) of the simulated cluster; default: a built-in one "
                    "like Bagpipe's testbed (V100 trainers, 10 Gbit/s; docs/planner.md)")
      ->check(CLI::ExistingFile);
  bench->add_option("--collective", flags->collective,
                    "simulate: cluster.collective of the simulated trainers: auto (NCCL's all-gather where the "
                    "profile has GPUs, the default), nccl, tls or gloo (the chain; docs/planner.md)")
      ->check(CLI::IsMember({"auto", "nccl", "tls", "gloo"}));
  bench->callback([flags] {
    if (flags->what.empty() && !flags->profile) {
      throw CLI::ValidationError("bench",
                                 "name what to run (oracle, data, train, recd, gpu, cluster, simulate, all), or --profile");
    }
    if (flags->vs_pytorch && flags->what != "train" && flags->what != "all") {
      throw CLI::ValidationError("--vs-pytorch", "compares train_bench: only with `bench train` or `bench all`");
    }
  });
  return [flags] { return RunBench(*flags); };
}

}  // namespace actorrec
