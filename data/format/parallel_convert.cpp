// Parallel parsing into parts, written into the output in file order.
#include "data/format/parallel_convert.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <thread>
#include <vector>

#include "data/bad_record_tally.hpp"
#include "data/format/dataset_file_reader.hpp"
#include "data/format/dataset_writer.hpp"

namespace actorrec::data::format {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// A part's chunk: larger than the output's, since a part is read once, in
// order, and fewer chunks cost less index and checksum work.
constexpr uint32_t kPartSamplesPerChunk = 16384;

struct Part {
  bool done = false;
  Status status;
  uint64_t samples = 0;
  BadRecords bad_records;
};

// What the workers and the reading thread share. `parts` is guarded by
// `mutex`; `next`, `no_more` (a file failed: take no further file) and
// `abandon` (the reading thread is done: drop the part in hand) are atomic.
struct Shared {
  const FileOpener* open = nullptr;
  std::string dir;
  size_t block_samples = 0;
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<Part> parts;
  std::atomic<size_t> next{0};
  std::atomic<bool> no_more{false};
  std::atomic<bool> abandon{false};

  std::string PathOf(size_t file) const { return (fs::path(dir) / ("part-" + std::to_string(file) + ".ards")).string(); }
};

// Converts one file into its part; the status names the file (the reader's)
// or the part.
Status WritePart(Shared& shared, size_t file, Part* part) {
  auto reader = (*shared.open)(file);
  if (!reader.ok()) return reader.status();
  DatasetWriterOptions options;
  options.samples_per_chunk = kPartSamplesPerChunk;
  options.multi_hot.assign((*reader)->schema().num_tables(), true);
  options.durable = false;  // scratch: deleted once copied, remade after a crash
  auto writer = DatasetWriter::Create(shared.PathOf(file), (*reader)->schema(), options);
  if (!writer.ok()) return writer.status();
  SampleBlock block;
  for (;;) {
    if (shared.abandon.load()) return Status::Unavailable("abandoned");  // nobody reads it
    if (Status s = (*reader)->Next(shared.block_samples, &block); !s.ok()) return s;
    if (block.empty()) break;
    if (Status s = (*writer)->Append(block); !s.ok()) return s;
  }
  part->bad_records = (*reader)->bad_records();
  part->samples = (*writer)->samples();
  if (part->samples == 0) return Status::Ok();  // the writer removes its file
  auto bytes = (*writer)->Finish();
  return bytes.ok() ? Status::Ok() : bytes.status();
}

void Work(Shared* shared) {
  for (;;) {
    const size_t file = shared->next.fetch_add(1);
    if (file >= shared->parts.size() || shared->no_more.load()) return;
    Part part;
    part.status = WritePart(*shared, file, &part);
    const bool failed = !part.status.ok();
    {
      std::lock_guard<std::mutex> lock(shared->mutex);
      part.done = true;
      shared->parts[file] = std::move(part);
    }
    shared->changed.notify_all();
    // Files are taken in order, so every file before a failed one is taken
    // already and will be finished: the error first in file order is kept.
    if (failed) {
      shared->no_more.store(true);
      return;
    }
  }
}

// The parts as one stream in file order, waiting for each to be finished.
class PartsReader final : public SampleReader {
 public:
  PartsReader(Shared* shared, const ParallelConvertOptions* options, Clock::time_point start)
      : shared_(shared), options_(options), start_(start) {}

  // Opens the first part with samples (its schema is every part's).
  Status Start() {
    if (Status s = OpenNext(); !s.ok()) return s;
    if (current_ != nullptr) schema_ = current_->schema();
    return Status::Ok();
  }
  // After Start: whether no file had a sample.
  bool empty() const { return current_ == nullptr; }

  const DatasetSchema& schema() const override { return schema_; }
  const BadRecords& bad_records() const override { return bad_records_; }

  Status Next(size_t max_samples, SampleBlock* out) override {
    for (;;) {
      if (current_ == nullptr) {
        out->Reset(schema_);
        return Status::Ok();
      }
      if (Status s = current_->Next(max_samples, out); !s.ok()) return s;
      if (!out->empty()) {
        progress_.samples += out->size();
        return Status::Ok();
      }
      current_.reset();
      fs::remove(shared_->PathOf(current_file_));
      ++progress_.files_written;
      Report();
      if (Status s = OpenNext(); !s.ok()) return s;
    }
  }

 private:
  // Waits for part `file_`, skipping empty ones; current_ stays null past
  // the last file.
  Status OpenNext() {
    while (file_ < shared_->parts.size()) {
      const size_t file = file_++;
      Part part;
      {
        std::unique_lock<std::mutex> lock(shared_->mutex);
        while (!shared_->parts[file].done) {
          const auto period = std::chrono::duration<double>(options_->progress_seconds);
          if (!shared_->changed.wait_for(lock, period, [&] { return shared_->parts[file].done; })) {
            progress_.files_parsed = Parsed();
            lock.unlock();
            Report();
            lock.lock();
          }
        }
        part = shared_->parts[file];
        progress_.files_parsed = Parsed();
      }
      if (!part.status.ok()) return part.status;
      bad_records_.Add(part.bad_records);
      if (part.samples == 0) {
        ++progress_.files_written;
        continue;
      }
      auto reader = DatasetFileReader::Open(shared_->PathOf(file));
      if (!reader.ok()) return reader.status();
      current_ = std::move(reader).value();
      current_file_ = file;
      return Status::Ok();
    }
    Report();  // the end (the last files may have had no samples)
    return Status::Ok();
  }

  // REQUIRES: shared_->mutex held.
  size_t Parsed() const {
    return static_cast<size_t>(std::count_if(shared_->parts.begin(), shared_->parts.end(),
                                             [](const Part& p) { return p.done; }));
  }

  // At most every progress_seconds, and always for the last file.
  void Report() {
    if (!options_->progress || final_reported_) return;
    progress_.files = shared_->parts.size();
    progress_.seconds = std::chrono::duration<double>(Clock::now() - start_).count();
    if (progress_.files_written < progress_.files && progress_.seconds < last_report_ + options_->progress_seconds) {
      return;
    }
    last_report_ = progress_.seconds;
    final_reported_ = progress_.files_written == progress_.files;
    options_->progress(progress_);
  }

  Shared* shared_;
  const ParallelConvertOptions* options_;
  const Clock::time_point start_;
  size_t file_ = 0;  // the next part to open
  size_t current_file_ = 0;  // current_'s
  std::unique_ptr<DatasetFileReader> current_;
  DatasetSchema schema_;
  BadRecords bad_records_;
  ConvertProgress progress_;
  double last_report_ = 0;  // progress_.seconds when last reported
  bool final_reported_ = false;
};

// Stops and joins the workers and removes the scratch folder, however the
// conversion ends.
struct Workers {
  Shared* shared;
  std::vector<std::thread> threads;
  ~Workers() {
    shared->no_more.store(true);
    shared->abandon.store(true);
    for (auto& t : threads) t.join();
    std::error_code ignored;
    fs::remove_all(shared->dir, ignored);
  }
};

}  // namespace

Result<ConvertReport> ParallelConvert(size_t num_files, const FileOpener& open, const std::string& out_path,
                                      ParallelConvertOptions options) {
  const auto start = Clock::now();
  Shared shared;
  shared.open = &open;
  shared.dir = out_path + ".parts";
  shared.block_samples = options.convert.block_samples;
  shared.parts.resize(num_files);
  // A leftover of an interrupted conversion to the same output.
  std::error_code ec;
  fs::remove_all(shared.dir, ec);
  if (!fs::create_directories(shared.dir, ec) || ec) {
    return Status::IoError("cannot create the scratch folder " + shared.dir + ": " + ec.message());
  }
  unsigned threads = options.threads != 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<size_t>(threads, std::max<size_t>(num_files, 1)));
  Workers workers{&shared, {}};
  for (unsigned i = 0; i < threads; ++i) workers.threads.emplace_back(Work, &shared);

  auto parts = std::make_unique<PartsReader>(&shared, &options, start);
  if (Status s = parts->Start(); !s.ok()) return s;
  if (parts->empty()) return NoSamples(options.convert.source_name, parts->bad_records());
  PartsReader* parts_view = parts.get();
  std::unique_ptr<SampleReader> stream = std::move(parts);
  if (options.filter) stream = options.filter(std::move(stream));
  auto report = Convert(*stream, out_path, options.convert);
  if (report.ok()) report->bad_records = parts_view->bad_records();
  if (report.ok()) report->seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return report;
}

}  // namespace actorrec::data::format
