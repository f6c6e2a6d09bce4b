// RecordScanner: the raw records of a list of text files in one format,
// with the bad-record policy applied. Shared by the dictionary's counting
// pass and by TextReader, so both see exactly the same records.
//
// File-level problems end the scan under both policies, because skipping
// them would drop a whole file without a record to count: a file that
// cannot be opened, an empty file, a header that differs from the format's,
// and a first data line with the wrong column count (the schema does not
// match the file). Line-level problems follow the policy, and so does a
// record whose dense values are not all finite (data/sample_values.hpp).
//
// Blank lines: trailing blank lines of a file are not records (many files,
// such as some copies of UCI Adult's test split, end with one) and are
// ignored; a blank line followed by more data is a bad record "blank line".
// Not thread-safe.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "data/readers/bad_record_log.hpp"
#include "data/readers/line_source.hpp"
#include "data/readers/text_format.hpp"

namespace actorrec::data::readers {

class RecordScanner {
 public:
  // `format` must outlive the scanner. Files are opened in turn as reached.
  RecordScanner(const std::vector<std::string>& paths, TextFormat* format, BadRecordPolicy policy,
                size_t chunk_bytes = kDefaultChunkBytes);
  // The records of pieces of files (text_piece.hpp), in turn: only a
  // file's first piece has its header and its schema check, and blank lines
  // at the end of a piece are trailing only if no data follows in the file.
  RecordScanner(std::vector<TextPiece> pieces, TextFormat* format, BadRecordPolicy policy,
                size_t chunk_bytes = kDefaultChunkBytes);

  // The next good record in *out; *got is false at the end of the last file.
  // An error ends the scan (and is returned again by later calls).
  Status Next(RawRecord* out, bool* got);

  const BadRecords& bad_records() const { return log_.records(); }
  // Shapes a RawRecord for the format.
  void Shape(RawRecord* record) const;

 private:
  Status NextLine(std::string_view* line, bool* got);
  Status FlushBlankLines();
  // At the end of a piece with blank lines pending: reports them as bad
  // records if the file has more data after the piece.
  Status SettleBlankLinesAfterPiece();
  Status Fail(Status s);
  // False, with error_ set, when a parsed record has a non-finite dense
  // value (every format's labels are 0 or 1 by construction).
  bool Finite(const RawRecord& record);

  std::vector<TextPiece> pieces_;
  TextFormat* format_;
  BadRecordLog log_;
  size_t chunk_bytes_;
  size_t next_piece_ = 0;
  bool last_piece_of_file_ = true;
  std::optional<LineSource> source_;
  bool header_pending_ = false;
  bool first_data_line_ = false;
  uint64_t blank_count_ = 0;  // blank lines not yet known to be trailing
  uint64_t first_blank_ = 0;  // line number of the first of them
  RecordError error_;
  Status failed_;
};

}  // namespace actorrec::data::readers
