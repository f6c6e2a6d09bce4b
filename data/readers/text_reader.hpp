// TextReader: a SampleReader over text files in one TextFormat (Criteo TSV,
// Avazu CSV, schema CSV), mapping categorical values with a fixed
// CategoricalMapping; and BuildMapping, the counting pass that makes one.
//
// Typical use: BuildMapping over the training files, Save() the mapping with
// the dataset, then open the training and evaluation files with it (or
// Load() it later). Memory is bounded by the chunk size plus the mapping.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.hpp"
#include "data/readers/categorical.hpp"
#include "data/readers/record_scanner.hpp"
#include "data/readers/text_format.hpp"
#include "data/readers/text_piece.hpp"
#include "data/sample_reader.hpp"

namespace actorrec::data::readers {

class TextReader final : public SampleReader {
 public:
  // The mapping's tables must be the format's, by name and order.
  static Result<std::unique_ptr<TextReader>> Open(std::vector<std::string> paths, std::unique_ptr<TextFormat> format,
                                                  std::shared_ptr<const CategoricalMapping> mapping,
                                                  BadRecordPolicy policy, size_t chunk_bytes = kDefaultChunkBytes);
  // The samples of pieces of files (text_piece.hpp), in order.
  static Result<std::unique_ptr<TextReader>> Open(std::vector<TextPiece> pieces, std::unique_ptr<TextFormat> format,
                                                  std::shared_ptr<const CategoricalMapping> mapping,
                                                  BadRecordPolicy policy, size_t chunk_bytes = kDefaultChunkBytes);

  const DatasetSchema& schema() const override { return schema_; }
  Status Next(size_t max_samples, SampleBlock* out) override;
  const BadRecords& bad_records() const override { return scanner_.bad_records(); }

 private:
  TextReader(std::vector<TextPiece> pieces, std::unique_ptr<TextFormat> format,
             std::shared_ptr<const CategoricalMapping> mapping, BadRecordPolicy policy, size_t chunk_bytes);

  std::unique_ptr<TextFormat> format_;
  std::shared_ptr<const CategoricalMapping> mapping_;
  RecordScanner scanner_;
  DatasetSchema schema_;
  RawRecord record_;
};

// One spec per table of `format`: a dictionary with `min_count`.
std::vector<TableMappingSpec> DictionarySpecs(const TextFormat& format, uint64_t min_count);

// The identity of each of `paths` (mapping_source.hpp), in order: what
// BuildMapping records in the mapping, and what a loaded mapping is checked
// against (CategoricalMapping::CheckBuiltFrom).
Result<std::vector<SourceFile>> IdentifyFiles(const std::vector<std::string>& paths);

// The counting pass: reads every record of `paths` once and builds the
// mapping `specs` describe (one per format table, same names and order),
// recording the files' identity in it. Bad records follow `policy`; those
// skipped are added to *skipped if given (the reading pass will meet and
// count them again).
Result<CategoricalMapping> BuildMapping(const std::vector<std::string>& paths, TextFormat* format,
                                        std::vector<TableMappingSpec> specs, BadRecordPolicy policy,
                                        BadRecords* skipped = nullptr);

// A fresh format for one scan (formats are not thread-safe).
using TextFormatFactory = std::function<Result<std::unique_ptr<TextFormat>>()>;

struct CountingOptions {
  unsigned threads = 1;  // at most one per piece; 0 = one per hardware thread
  // Plain files larger than this are counted in pieces (text_piece.hpp).
  uint64_t piece_bytes = kDefaultPieceBytes;
  // Called on the calling thread about every `progress_seconds` and once at
  // the end, with the files counted so far.
  std::function<void(size_t pieces_counted, size_t pieces, double seconds)> progress;
  double progress_seconds = 2.0;
};

// BuildMapping with the files counted on several threads: each thread takes
// the next piece of a file (a whole file unless it is a large plain one)
// and counts it with its own format into its own counts, merged at the
// end. The same mapping as BuildMapping for any thread count and piece size
// (counts are sums, and rows are ordered by count then key); the error is
// the first failing piece's in file order, and skipped records are added in
// that order. Memory: up to one set of counts per thread, so a dictionary
// over many distinct values wants fewer threads.
Result<CategoricalMapping> BuildMappingInParallel(const std::vector<std::string>& paths,
                                                  const TextFormatFactory& make_format,
                                                  std::vector<TableMappingSpec> specs, BadRecordPolicy policy,
                                                  const CountingOptions& options, BadRecords* skipped = nullptr);

}  // namespace actorrec::data::readers
