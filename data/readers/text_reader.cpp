// TextReader and the dictionary's counting pass.
#include "data/readers/text_reader.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace actorrec::data::readers {
namespace {

Status CheckTables(const TextFormat& format, const std::vector<std::string>& names) {
  const auto& want = format.table_names();
  if (names.size() != want.size()) {
    return Status::InvalidArgument("the categorical mapping has " + std::to_string(names.size()) +
                                   " tables, the format has " + std::to_string(want.size()));
  }
  for (size_t t = 0; t < want.size(); ++t) {
    if (names[t] != want[t]) {
      return Status::InvalidArgument("categorical table " + std::to_string(t) + " is '" + names[t] +
                                     "' in the mapping, '" + want[t] + "' in the format");
    }
  }
  return Status::Ok();
}

// The mapping specs' tables must be the format's, by name and order.
Status CheckSpecTables(const TextFormat& format, const std::vector<TableMappingSpec>& specs) {
  std::vector<std::string> names;
  for (const auto& s : specs) names.push_back(s.name);
  return CheckTables(format, names);
}

}  // namespace

TextReader::TextReader(std::vector<TextPiece> pieces, std::unique_ptr<TextFormat> format,
                       std::shared_ptr<const CategoricalMapping> mapping, BadRecordPolicy policy, size_t chunk_bytes)
    : format_(std::move(format)),
      mapping_(std::move(mapping)),
      scanner_(std::move(pieces), format_.get(), policy, chunk_bytes) {
  schema_.dense_names = format_->dense_names();
  schema_.tables = mapping_->tables();
  scanner_.Shape(&record_);
}

Result<std::unique_ptr<TextReader>> TextReader::Open(std::vector<std::string> paths, std::unique_ptr<TextFormat> format,
                                                     std::shared_ptr<const CategoricalMapping> mapping,
                                                     BadRecordPolicy policy, size_t chunk_bytes) {
  std::vector<TextPiece> pieces;
  for (auto& path : paths) pieces.push_back(TextPiece::WholeFile(std::move(path)));
  return Open(std::move(pieces), std::move(format), std::move(mapping), policy, chunk_bytes);
}

Result<std::unique_ptr<TextReader>> TextReader::Open(std::vector<TextPiece> pieces, std::unique_ptr<TextFormat> format,
                                                     std::shared_ptr<const CategoricalMapping> mapping,
                                                     BadRecordPolicy policy, size_t chunk_bytes) {
  ACTORREC_ASSERT(format != nullptr && mapping != nullptr, "TextReader needs a format and a mapping");
  std::vector<std::string> names;
  for (size_t t = 0; t < mapping->num_tables(); ++t) names.push_back(mapping->name(t));
  if (Status s = CheckTables(*format, names); !s.ok()) return s;
  return std::unique_ptr<TextReader>(
      new TextReader(std::move(pieces), std::move(format), std::move(mapping), policy, chunk_bytes));
}

Status TextReader::Next(size_t max_samples, SampleBlock* out) {
  out->Reset(schema_);
  const size_t num_dense = schema_.num_dense();
  const size_t num_tables = schema_.num_tables();
  const CategoricalMapping& mapping = *mapping_;
  while (out->size() < max_samples) {
    bool got = false;
    if (Status s = scanner_.Next(&record_, &got); !s.ok()) {
      out->Reset(schema_);  // an error ends the stream: hand out no half block
      return s;
    }
    if (!got) break;
    out->labels.push_back(record_.label);
    out->dense.insert(out->dense.end(), record_.dense.begin(), record_.dense.begin() + num_dense);
    for (size_t t = 0; t < num_tables; ++t) {
      out->tables[t].AppendSingle(record_.present[t] ? mapping.Map(t, record_.keys[t]) : kMissingRow);
    }
  }
  return Status::Ok();
}

Result<std::vector<SourceFile>> IdentifyFiles(const std::vector<std::string>& paths) {
  std::vector<SourceFile> files;
  for (const auto& path : paths) {
    auto id = IdentifyFile(path);
    if (!id.ok()) return id.status();
    files.push_back(std::move(id).value());
  }
  return files;
}

std::vector<TableMappingSpec> DictionarySpecs(const TextFormat& format, uint64_t min_count) {
  std::vector<TableMappingSpec> specs;
  for (const auto& name : format.table_names()) specs.push_back({name, MappingKind::kDictionary, 0, min_count});
  return specs;
}

namespace {

// Adds every present value of `paths`' records to *builder.
template <class Inputs>  // paths or pieces
Status CountValues(Inputs inputs, TextFormat* format, BadRecordPolicy policy, DictionaryBuilder* builder,
                   BadRecords* skipped) {
  RecordScanner scanner(std::move(inputs), format, policy);
  RawRecord record;
  scanner.Shape(&record);
  const size_t num_tables = builder->num_tables();
  for (;;) {
    bool got = false;
    if (Status s = scanner.Next(&record, &got); !s.ok()) return s;
    if (!got) break;
    for (size_t t = 0; t < num_tables; ++t) {
      if (record.present[t]) builder->Add(t, record.keys[t]);
    }
  }
  skipped->Add(scanner.bad_records());
  return Status::Ok();
}

Result<CategoricalMapping> FinishWithSources(DictionaryBuilder builder, const std::vector<std::string>& paths) {
  auto sources = IdentifyFiles(paths);
  if (!sources.ok()) return sources.status();
  auto mapping = std::move(builder).Finish();
  if (mapping.ok()) mapping->set_sources(std::move(sources).value());
  return mapping;
}

}  // namespace

Result<CategoricalMapping> BuildMapping(const std::vector<std::string>& paths, TextFormat* format,
                                        std::vector<TableMappingSpec> specs, BadRecordPolicy policy,
                                        BadRecords* skipped) {
  if (Status s = CheckSpecTables(*format, specs); !s.ok()) return s;
  auto builder = DictionaryBuilder::Create(std::move(specs));
  if (!builder.ok()) return builder.status();
  BadRecords counted;
  if (Status s = CountValues(paths, format, policy, &builder.value(), &counted); !s.ok()) return s;
  if (skipped != nullptr) skipped->Add(counted);
  return FinishWithSources(std::move(builder).value(), paths);
}

Result<CategoricalMapping> BuildMappingInParallel(const std::vector<std::string>& paths,
                                                  const TextFormatFactory& make_format,
                                                  std::vector<TableMappingSpec> specs, BadRecordPolicy policy,
                                                  const CountingOptions& options, BadRecords* skipped) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto first_format = make_format();
  if (!first_format.ok()) return first_format.status();
  if (Status s = CheckSpecTables(**first_format, specs); !s.ok()) return s;
  auto merged = DictionaryBuilder::Create(specs);
  if (!merged.ok()) return merged.status();

  auto pieces = SplitIntoPieces(paths, options.piece_bytes);
  if (!pieces.ok()) return pieces.status();
  const size_t num_pieces = pieces->size();
  const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
  const size_t threads = std::max<size_t>(
      1, std::min<size_t>(options.threads == 0 ? hardware : options.threads, num_pieces));
  std::vector<Status> piece_status(num_pieces, Status::Ok());
  std::vector<BadRecords> piece_skipped(num_pieces);
  std::atomic<size_t> next_piece{0};
  std::atomic<size_t> first_failed{num_pieces};  // later pieces need not be counted
  std::mutex mutex;
  std::condition_variable changed;
  size_t counted = 0;
  size_t workers_done = 0;
  std::vector<DictionaryBuilder> builders;
  for (size_t w = 0; w < threads; ++w) builders.push_back(*DictionaryBuilder::Create(specs));

  auto work = [&](size_t w, std::unique_ptr<TextFormat> format) {
    for (size_t piece; (piece = next_piece.fetch_add(1)) < num_pieces && piece <= first_failed.load();) {
      Status s;
      if (format == nullptr) {  // each thread makes its own, once
        auto made = make_format();
        if (made.ok()) {
          format = std::move(made).value();
        } else {
          s = made.status();
        }
      }
      if (s.ok()) {
        s = CountValues(std::vector<TextPiece>{(*pieces)[piece]}, format.get(), policy, &builders[w],
                        &piece_skipped[piece]);
      }
      if (!s.ok()) {
        piece_status[piece] = std::move(s);
        size_t seen = first_failed.load();
        while (piece < seen && !first_failed.compare_exchange_weak(seen, piece)) {
        }
      }
      std::lock_guard lock(mutex);
      ++counted;
      changed.notify_all();
    }
    std::lock_guard lock(mutex);
    ++workers_done;
    changed.notify_all();
  };
  std::vector<std::thread> pool;
  for (size_t w = 1; w < threads; ++w) pool.emplace_back(work, w, nullptr);
  pool.emplace_back(work, 0, std::move(first_format).value());
  const auto report = [&](size_t pieces_counted) {
    if (options.progress) {
      options.progress(pieces_counted, num_pieces, std::chrono::duration<double>(Clock::now() - start).count());
    }
  };
  {
    std::unique_lock lock(mutex);
    const auto every = std::chrono::duration<double>(std::max(0.01, options.progress_seconds));
    while (workers_done < threads) {
      if (!changed.wait_for(lock, every, [&] { return workers_done == threads; })) report(counted);
    }
  }
  for (auto& t : pool) t.join();
  report(counted);
  for (const Status& s : piece_status) {
    if (!s.ok()) return s;
  }
  for (auto& b : builders) merged->Merge(std::move(b));
  if (skipped != nullptr) {
    for (const auto& s : piece_skipped) skipped->Add(s);
  }
  return FinishWithSources(std::move(merged).value(), paths);
}

}  // namespace actorrec::data::readers
