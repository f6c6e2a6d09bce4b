// Measures the data path's front end in one run and on one thread: Criteo TSV
// to actorrec's format (what `actorrec data convert` runs) against a plain
// sequential read of the same TSV bytes, and the synthetic generator (what
// `actorrec data gen` reads from) on the Criteo Kaggle preset, with and
// without sessions. Ratios within one run are what the issue asks for: the
// machine is shared, so absolute figures move between runs, ratios much less.
//
// Usage: data_bench [--samples N] [--dir DIR] [--reps N] [--seed S]
//                   [--row-scale X] [--session-length L] [--session-dup P]
// Rates per core come from the thread's CPU time (user + system, so read()
// counts), the median of --reps runs; wall-clock MB/s are printed beside
// them, since converting also waits for the output's fsync. The TSV, written
// once before timing, stays in the page cache: every TSV row reads it from
// memory, as the second pass over a real file would. Everything is written
// under a fresh directory mkdtemp makes in --dir, removed at the end.
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "data/format/convert.hpp"
#include "data/gen/generator_options.hpp"
#include "data/gen/synthetic_generator.hpp"
#include "data/readers/categorical.hpp"
#include "data/readers/criteo_tsv.hpp"
#include "data/readers/line_source.hpp"
#include "data/readers/posix_file.hpp"
#include "data/readers/text_reader.hpp"
#include "tools/bench/bench_cli.hpp"

using namespace actorrec;
using namespace actorrec::data;

namespace {

// Share of empty fields per column, roughly as in Criteo Kaggle's train.txt
// (I12 and C22 are mostly empty, C19/C20/C25/C26 about half): empty fields
// shorten the lines and take the parser's cheap branch, so they change MB/s.
constexpr double kDenseMissing[13] = {0.45, 0.0, 0.21, 0.22, 0.03, 0.22, 0.04, 0.0, 0.04, 0.45, 0.04, 0.76, 0.22};
constexpr double kTableMissing[26] = {0, 0, 0.03, 0.03, 0, 0.12, 0, 0, 0, 0, 0, 0.03, 0,
                                      0, 0, 0.03, 0, 0, 0.44, 0.44, 0.03, 0.76, 0, 0.03, 0.44, 0.44};

struct Flags {
  uint64_t samples = 500'000;
  std::string dir;
  int reps = 3;
  uint64_t seed = 1;
  double row_scale = 1.0;        // of the generator's Criteo Kaggle tables
  uint32_t session_length = 8;   // the "with sessions" row
  double session_dup = 0.5;      // every table's RecD duplication probability there
  std::string csv;               // also write both tables' rows here
};

// Exits 0 after --help, 2 on a bad flag (naming it).
Flags ParseFlags(int argc, char** argv) {
  Flags flags;
  const char* tmp = std::getenv("TMPDIR");
  flags.dir = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  CLI::App app{"Criteo TSV -> actorrec format against a plain read of the TSV, and the generator's samples/s with "
               "and without sessions, one thread, in one run.",
               "data_bench"};
  app.add_option("--samples", flags.samples, "samples (default 500000)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  app.add_option("--dir", flags.dir, "where the scratch files go (default $TMPDIR or /tmp)")
      ->check(CLI::ExistingDirectory);
  app.add_option("--reps", flags.reps, "repeats, the median reported (default 3)")->check(CLI::Range(1, 1000));
  app.add_option("--seed", flags.seed, "seed of the generated data (default 1)");
  app.add_option("--row-scale", flags.row_scale, "share of the Criteo Kaggle table sizes, in (0, 1] (default 1)")
      ->check(CLI::Range(1e-9, 1.0));
  app.add_option("--session-length", flags.session_length, "samples per session in the sessions row (default 8)")
      ->check(CLI::Range(uint32_t{2}, uint32_t{1} << 20));
  app.add_option("--session-dup", flags.session_dup, "each table's duplication probability there, in [0, 1]")
      ->check(CLI::Range(0.0, 1.0));
  bench::AddCsvFlag(app, &flags.csv);
  if (const int code = bench::ParseArgs(app, argc, argv); code >= 0) std::exit(code);
  return flags;
}

std::string g_dir;  // the scratch directory, removed on every exit

void Fail(const std::string& message) {
  std::fprintf(stderr, "data_bench: %s\n", message.c_str());
  if (!g_dir.empty()) std::filesystem::remove_all(g_dir);
  std::exit(1);
}

void Check(const Status& status) {
  if (!status.ok()) Fail(status.ToString());
}

// One timed run: the thread's CPU seconds and the wall seconds.
struct Times {
  double cpu = 0;
  double wall = 0;
};

double ThreadCpu() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double Now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// Median CPU and wall time of `reps` runs of `pass`. `setup` runs untimed
// before each (opening a fresh reader or generator, removing the last output).
// The median rather than format_bench's best: the issue asks for typical
// figures, and on a shared machine the best run can be an outlier too.
Times Measure(int reps, const std::function<void()>& setup, const std::function<void()>& pass) {
  std::vector<double> cpu, wall;
  for (int r = 0; r < reps; ++r) {
    setup();
    const double c0 = ThreadCpu();
    const double w0 = Now();
    pass();
    wall.push_back(Now() - w0);
    cpu.push_back(ThreadCpu() - c0);
  }
  return {Median(cpu), Median(wall)};
}

// Appends `v` in decimal.
void AppendInt(int64_t v, std::string* out) {
  char buf[24];
  const auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
  out->append(buf, end);
}

// Writes `samples` lines of Criteo Kaggle TSV from a seeded RNG. Dense counts
// are log-uniform in [0, 2^14) (most small, a few large, like the real
// counts) and I2 is sometimes negative, as in the real file; categorical
// values are 8 zero-padded hex digits. The values' distribution does not
// matter to the parser's speed, only the lines' shape. Returns the bytes.
uint64_t WriteTsv(const std::string& path, uint64_t samples, uint64_t seed) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) Fail("cannot create " + path);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string text;
  uint64_t bytes = 0;
  for (uint64_t i = 0; i < samples; ++i) {
    text.push_back(unit(rng) < 0.25 ? '1' : '0');
    for (int j = 0; j < 13; ++j) {
      text.push_back('\t');
      if (unit(rng) < kDenseMissing[j]) continue;
      if (j == 1 && unit(rng) < 0.05) {
        AppendInt(-1 - static_cast<int64_t>(rng() % 3), &text);
      } else {
        AppendInt(static_cast<int64_t>(std::exp2(14.0 * unit(rng))) - 1, &text);
      }
    }
    for (int t = 0; t < 26; ++t) {
      text.push_back('\t');
      if (unit(rng) < kTableMissing[t]) continue;
      const auto value = static_cast<uint32_t>(rng());
      for (int shift = 28; shift >= 0; shift -= 4) text.push_back(kHex[(value >> shift) & 0xf]);
    }
    text.push_back('\n');
    if (text.size() >= (size_t{1} << 20) || i + 1 == samples) {
      if (std::fwrite(text.data(), 1, text.size(), f) != text.size()) Fail("cannot write " + path);
      bytes += text.size();
      text.clear();
    }
  }
  if (std::fclose(f) != 0) Fail("cannot write " + path);
  return bytes;
}

// The baseline: the file's bytes through read() in the chunks the TSV reader
// asks for (kDefaultChunkBytes), into one buffer, touching nothing else.
void ReadPlain(const std::string& path, std::vector<char>* buffer) {
  auto file = readers::ReadFile::Open(path);
  Check(file.status());
  size_t got = 0;
  volatile char sink = 0;
  do {
    Check(file->Read(buffer->data(), buffer->size(), &got));
    if (got > 0) sink = sink + (*buffer)[got - 1];
  } while (got > 0);
}

// The reader `actorrec data convert` opens for dataset.source = "criteo_tsv"
// with categorical = "hash" (actors/sampler/dataset_source.cpp): the Criteo
// format and every table hashed, here into its Criteo Kaggle cardinality.
std::unique_ptr<readers::TextReader> OpenTsv(const std::string& path,
                                             const std::shared_ptr<const readers::CategoricalMapping>& mapping) {
  auto reader = readers::TextReader::Open({path}, readers::CriteoTsvFormat(), mapping, BadRecordPolicy::kFail);
  Check(reader.status());
  return std::move(reader.value());
}

std::unique_ptr<gen::SyntheticGenerator> OpenGenerator(const gen::GeneratorOptions& options) {
  auto generator = gen::SyntheticGenerator::Open(options);
  Check(generator.status());
  return std::move(generator.value());
}

// Reads every block of `reader` as Convert does, and returns the samples.
uint64_t Drain(SampleReader& reader) {
  SampleBlock block;
  uint64_t samples = 0;
  do {
    Check(reader.Next(format::ConvertOptions{}.block_samples, &block));
    samples += block.size();
  } while (!block.empty());
  return samples;
}

}  // namespace

int main(int argc, char** argv) {
  const Flags flags = ParseFlags(argc, argv);
  bench::CsvTable csv(flags.csv, {"table", "row", "samples_per_s_per_core", "ratio"});  // before any scratch file
  std::string command = argv[0];
  for (int i = 1; i < argc; ++i) command.append(" ").append(argv[i]);

  std::string dir_template = flags.dir + "/data_bench.XXXXXX";
  if (::mkdtemp(dir_template.data()) == nullptr) Fail("cannot create a directory in " + flags.dir);
  g_dir = dir_template;
  const std::string tsv = g_dir + "/criteo.tsv";
  const std::string ards = g_dir + "/criteo.ards";

  const uint64_t tsv_bytes = WriteTsv(tsv, flags.samples, flags.seed);
  const double mb = static_cast<double>(tsv_bytes) / 1e6;
  const double n = static_cast<double>(flags.samples);

  std::vector<TableSchema> tables;
  for (size_t t = 0; t < readers::kCriteoTables; ++t)
    tables.push_back({std::string("C").append(std::to_string(t + 1)), gen::CriteoKaggleRows()[t]});  // append: GCC 12 -Wrestrict
  auto hashing = readers::CategoricalMapping::Hashing(tables);
  Check(hashing.status());
  const auto mapping = std::make_shared<const readers::CategoricalMapping>(std::move(hashing.value()));

  // The first pass warms the page cache and the allocator for every row.
  std::vector<char> buffer(readers::kDefaultChunkBytes);
  ReadPlain(tsv, &buffer);
  const auto nothing = [] {};
  const Times read = Measure(flags.reps, nothing, [&] { ReadPlain(tsv, &buffer); });

  std::unique_ptr<readers::TextReader> reader;
  uint64_t parsed = 0;
  const Times parse = Measure(flags.reps, [&] { reader = OpenTsv(tsv, mapping); },
                              [&] { parsed = Drain(*reader); });
  if (parsed != flags.samples) Fail("the TSV reader returned " + std::to_string(parsed) + " samples");

  uint64_t ards_bytes = 0;
  const Times convert = Measure(
      flags.reps,
      [&] {
        std::filesystem::remove(ards);
        reader = OpenTsv(tsv, mapping);
      },
      [&] {
        auto report = format::Convert(*reader, ards);
        Check(report.status());
        if (report->samples != flags.samples) Fail("convert wrote " + std::to_string(report->samples) + " samples");
        ards_bytes = report->bytes;
      });
  reader.reset();

  // The generator as `data gen` runs it on the criteo-kaggle preset: one
  // thread (dataset.generator.threads = 1), read in Convert's blocks.
  gen::GeneratorOptions plain = gen::CriteoKaggleOptions(flags.row_scale);
  plain.samples = flags.samples;
  plain.seed = flags.seed;
  plain.threads = 1;
  gen::GeneratorOptions sessions = plain;
  sessions.session_length = flags.session_length;
  for (auto& table : sessions.tables) table.session_dup_prob = flags.session_dup;
  std::unique_ptr<gen::SyntheticGenerator> generator;
  const auto generate = [&] {
    if (const uint64_t got = Drain(*generator); got != flags.samples)
      Fail("the generator returned " + std::to_string(got) + " samples");
  };
  const Times gen_plain = Measure(flags.reps, [&] { generator = OpenGenerator(plain); }, generate);
  const Times gen_sessions = Measure(flags.reps, [&] { generator = OpenGenerator(sessions); }, generate);
  generator.reset();

  std::printf("$ %s\n", command.c_str());
  std::printf("data_bench: %llu samples of Criteo Kaggle TSV, %.1f MB (%.1f B/line) in %s; actorrec file %.1f MB\n",
              static_cast<unsigned long long>(flags.samples), mb, static_cast<double>(tsv_bytes) / n, g_dir.c_str(),
              static_cast<double>(ards_bytes) / 1e6);
  std::printf("one thread, median of %d; per core = thread CPU time (user + system), wall beside it\n\n", flags.reps);

  std::printf("%-42s %10s %14s %8s %10s\n", "TSV (MB of TSV text)", "MB/s/core", "samples/s/core", "vs read",
              "wall MB/s");
  const auto tsv_row = [&](const char* name, const Times& t) {
    std::printf("%-42s %10.0f %14.3g %8.3f %10.0f\n", name, mb / t.cpu, n / t.cpu, read.cpu / t.cpu, mb / t.wall);
    csv.Row({"TSV (vs read)", name, bench::Num(n / t.cpu), bench::Num(read.cpu / t.cpu)});
  };
  tsv_row("plain sequential read (read(), 4 MiB)", read);
  tsv_row("TSV reader alone (parse + hash)", parse);
  tsv_row("convert: TSV reader -> dataset writer", convert);

  std::printf("\n%-42s %14s %16s %12s\n", "generator, criteo-kaggle preset", "samples/s/core", "vs no sessions",
              "wall samples/s");
  const auto gen_row = [&](const std::string& name, const Times& t) {
    std::printf("%-42s %14.3g %16.3f %12.3g\n", name.c_str(), n / t.cpu, gen_plain.cpu / t.cpu, n / t.wall);
    csv.Row({"generator (vs no sessions)", name, bench::Num(n / t.cpu), bench::Num(gen_plain.cpu / t.cpu)});
  };
  char scale[32];
  std::snprintf(scale, sizeof scale, "%g", flags.row_scale);
  gen_row(std::string("no sessions, row_scale ") + scale, gen_plain);
  char with[64];
  std::snprintf(with, sizeof with, "sessions of %u, dup %g", flags.session_length, flags.session_dup);
  gen_row(with, gen_sessions);

  std::filesystem::remove_all(g_dir);
  return 0;
}
