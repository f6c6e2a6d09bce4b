// ParallelConvert: the output's bytes do not depend on the number of threads
// or on when each file finishes, and equal one thread converting the files
// in order; the first error in file order wins and nothing is left behind.
#include "data/format/parallel_convert.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <thread>

#include "data/holdout.hpp"
#include "tests/data/format/format_test_util.hpp"

using namespace actorrec;
using namespace actorrec::data;
using namespace actorrec::data::format;
using namespace actorrec::data::format::testing;

namespace {

// Serves `samples` in random pieces, pausing a random while before some of
// them (so files finish in varying orders), optionally failing after
// `fail_after` samples; reports `skipped` bad records.
class PieceReader final : public SampleReader {
 public:
  PieceReader(const DatasetSchema& schema, SampleBlock samples, uint64_t seed, uint64_t skipped,
              size_t fail_after = SIZE_MAX, std::string name = "")
      : schema_(schema), samples_(std::move(samples)), rng_(seed), fail_after_(fail_after), name_(std::move(name)) {
    bad_.skipped = skipped;
    if (skipped > 0) bad_.by_reason["test reason"] = skipped;
  }
  const DatasetSchema& schema() const override { return schema_; }
  const BadRecords& bad_records() const override { return bad_; }
  Status Next(size_t max_samples, SampleBlock* out) override {
    out->Reset(schema_);
    if (rng_() % 3 == 0) std::this_thread::sleep_for(std::chrono::microseconds(rng_() % 3000));
    if (next_ >= fail_after_) return Status::InvalidArgument(name_ + ":" + std::to_string(next_ + 1) + ": bad line");
    const size_t n = std::min<size_t>({1 + rng_() % max_samples, samples_.size() - next_, fail_after_ - next_});
    out->Append(samples_, next_, next_ + n);
    next_ += n;
    return Status::Ok();
  }

 private:
  DatasetSchema schema_;
  SampleBlock samples_;
  std::mt19937_64 rng_;
  size_t fail_after_;
  std::string name_;
  BadRecords bad_;
  size_t next_ = 0;
};

// Several readers one after the other: the sequential reference.
class ChainReader final : public SampleReader {
 public:
  explicit ChainReader(std::vector<std::unique_ptr<SampleReader>> parts) : parts_(std::move(parts)) {
    for (auto& p : parts_) bad_.Add(p->bad_records());
  }
  const DatasetSchema& schema() const override { return parts_.front()->schema(); }
  const BadRecords& bad_records() const override { return bad_; }
  Status Next(size_t max_samples, SampleBlock* out) override {
    for (;;) {
      if (i_ == parts_.size()) {
        out->Reset(schema());
        return Status::Ok();
      }
      if (Status s = parts_[i_]->Next(max_samples, out); !s.ok() || !out->empty()) return s;
      ++i_;
    }
  }

 private:
  std::vector<std::unique_ptr<SampleReader>> parts_;
  BadRecords bad_;
  size_t i_ = 0;
};

struct Files {
  DatasetSchema schema;
  std::vector<SampleBlock> blocks;
};

// Seven files of 0 to about 9,000 samples; file 3 is empty. Single-hot
// tables but one, as the text formats give.
Files MakeFiles(std::mt19937_64& rng) {
  Files f;
  f.schema = RandomSchema(rng, 3, 4);
  std::vector<bool> multi_hot(f.schema.num_tables(), false);
  multi_hot.back() = true;
  for (size_t file = 0; file < 7; ++file) {
    const size_t n = file == 3 ? 0 : 1 + rng() % 9000;
    f.blocks.push_back(RandomBlock(rng, f.schema, multi_hot, n));
  }
  return f;
}

FileOpener OpenerOf(const Files& f, uint64_t timing_seed) {
  return [&f, timing_seed](size_t file) -> Result<std::unique_ptr<SampleReader>> {
    return std::unique_ptr<SampleReader>(
        std::make_unique<PieceReader>(f.schema, f.blocks[file], timing_seed * 31 + file, file));
  };
}

std::string Sequential(const Files& f, const ScratchDir& dir, const StreamFilter& filter) {
  std::vector<std::unique_ptr<SampleReader>> parts;
  for (size_t file = 0; file < f.blocks.size(); ++file) parts.push_back(OpenerOf(f, 0)(file).value());
  std::unique_ptr<SampleReader> all = std::make_unique<ChainReader>(std::move(parts));
  if (filter) all = filter(std::move(all));
  const std::string path = dir.File("sequential.ards");
  auto report = Convert(*all, path);
  REQUIRE(report.ok());
  return ReadBytes(path);
}

}  // namespace

TEST_CASE("parallel conversion writes the same bytes for any number of threads and any timing, as one thread in order",
          "[data][format]") {
  std::mt19937_64 rng(26);
  const Files files = MakeFiles(rng);
  ScratchDir dir;
  StreamFilter filter;
  SECTION("every sample") {}
  SECTION("through eval_fraction's hold-out, which counts samples across files") {
    filter = [](std::unique_ptr<SampleReader> r) { return HoldOutSplit(std::move(r), 0.3, true); };
  }
  const std::string want = Sequential(files, dir, filter);
  uint64_t timing = 1;
  for (unsigned threads : {1u, 2u, 3u, 7u, 0u}) {
    for (int repeat = 0; repeat < 2; ++repeat, ++timing) {
      INFO("threads " << threads << ", timing " << timing);
      ParallelConvertOptions options;
      options.threads = threads;
      options.filter = filter;
      options.progress_seconds = 0.001;
      std::vector<ConvertProgress> seen;
      options.progress = [&](const ConvertProgress& p) { seen.push_back(p); };
      const std::string out = dir.File("parallel.ards");
      auto report = ParallelConvert(files.blocks.size(), OpenerOf(files, timing), out, options);
      REQUIRE(report.ok());
      CHECK(ReadBytes(out) == want);
      CHECK(report->bad_records.skipped == 0 + 1 + 2 + 3 + 4 + 5 + 6);
      CHECK_FALSE(std::filesystem::exists(out + ".parts"));
      REQUIRE_FALSE(seen.empty());
      CHECK(seen.back().files_written == 7);
      CHECK(seen.back().files == 7);
      for (size_t i = 1; i < seen.size(); ++i) {
        CHECK(seen[i].files_written >= seen[i - 1].files_written);
        CHECK(seen[i].samples >= seen[i - 1].samples);
      }
    }
  }
}

TEST_CASE("parallel conversion reports the first failing file in file order and leaves no output or parts",
          "[data][format]") {
  std::mt19937_64 rng(27);
  const Files files = MakeFiles(rng);
  ScratchDir dir;
  const std::string out = dir.File("out.ards");
  // File 1 fails late, file 5 at once: file 5's error comes first in time.
  FileOpener open = [&](size_t file) -> Result<std::unique_ptr<SampleReader>> {
    const size_t fail_after = file == 1 ? files.blocks[1].size() - 1 : file == 5 ? 0 : SIZE_MAX;
    return std::unique_ptr<SampleReader>(std::make_unique<PieceReader>(
        files.schema, files.blocks[file], file, 0, fail_after, "day_" + std::to_string(file)));
  };
  for (unsigned threads : {1u, 2u, 4u}) {
    INFO("threads " << threads);
    ParallelConvertOptions options;
    options.threads = threads;
    auto report = ParallelConvert(files.blocks.size(), open, out, options);
    REQUIRE_FALSE(report.ok());
    CHECK_THAT(report.status().message(), Catch::StartsWith("day_1:"));
    CHECK_FALSE(std::filesystem::exists(out));
    CHECK_FALSE(std::filesystem::exists(out + ".parts"));
  }
  // Files without a sample at all: the usual no-samples error.
  const Files empty{files.schema, std::vector<SampleBlock>(3, RandomBlock(rng, files.schema, std::vector<bool>(files.schema.num_tables(), false), 0))};
  ParallelConvertOptions options;
  options.convert.source_name = "days/day_*.gz";
  auto none = ParallelConvert(3, OpenerOf(empty, 1), out, options);
  REQUIRE_FALSE(none.ok());
  CHECK_THAT(none.status().message(), Catch::Contains("days/day_*.gz"));
}
