// RecordScanner: lines -> raw records, with headers, blanks and policies.
#include "data/readers/record_scanner.hpp"

#include "data/readers/fields.hpp"
#include "data/sample_values.hpp"

namespace actorrec::data::readers {
namespace {

bool IsBlank(std::string_view line) { return TrimSpaces(line).empty(); }

}  // namespace

namespace {

std::vector<TextPiece> WholeFiles(const std::vector<std::string>& paths) {
  std::vector<TextPiece> pieces;
  for (const auto& path : paths) pieces.push_back(TextPiece::WholeFile(path));
  return pieces;
}

}  // namespace

RecordScanner::RecordScanner(const std::vector<std::string>& paths, TextFormat* format, BadRecordPolicy policy,
                             size_t chunk_bytes)
    : RecordScanner(WholeFiles(paths), format, policy, chunk_bytes) {}

RecordScanner::RecordScanner(std::vector<TextPiece> pieces, TextFormat* format, BadRecordPolicy policy,
                             size_t chunk_bytes)
    : pieces_(std::move(pieces)), format_(format), log_(policy), chunk_bytes_(chunk_bytes) {}

void RecordScanner::Shape(RawRecord* record) const {
  record->dense.assign(format_->dense_names().size(), 0.0f);
  record->keys.assign(format_->table_names().size(), 0);
  record->present.assign(format_->table_names().size(), 0);
}

Status RecordScanner::Fail(Status s) {
  failed_ = s;
  return s;
}

Status RecordScanner::FlushBlankLines() {
  if (blank_count_ == 0) return Status::Ok();
  const std::string where = source_->WhereLine(first_blank_);
  const std::string detail = "expected a record, found an empty line before more data";
  for (; blank_count_ > 0; --blank_count_) {
    if (Status s = log_.Report(where, "blank line", detail); !s.ok()) return s;
  }
  return Status::Ok();
}

Status RecordScanner::SettleBlankLinesAfterPiece() {
  if (blank_count_ == 0 || last_piece_of_file_) return Status::Ok();
  source_->ReadPastEnd();  // the next pieces' lines: only to see whether data follows
  for (;;) {
    std::string_view line;
    auto kind = source_->Next(&line);
    if (!kind.ok()) return kind.status();
    if (*kind == LineSource::Kind::kEnd) return Status::Ok();
    if (*kind == LineSource::Kind::kLine && (format_->IsComment(line) || IsBlank(line))) continue;
    return FlushBlankLines();  // data (or a line too long) follows: the blanks were before more data
  }
}

Status RecordScanner::NextLine(std::string_view* line, bool* got) {
  for (;;) {
    if (!source_) {
      if (next_piece_ == pieces_.size()) {
        *got = false;
        return Status::Ok();
      }
      const TextPiece& piece = pieces_[next_piece_++];
      auto opened = LineSource::Open(piece, chunk_bytes_);
      if (!opened.ok()) return opened.status();
      source_.emplace(std::move(opened).value());
      header_pending_ = format_->has_header() && piece.first();
      first_data_line_ = piece.first();
      last_piece_of_file_ = piece.last();
      blank_count_ = 0;
    }
    auto kind = source_->Next(line);
    if (!kind.ok()) return kind.status();
    if (*kind == LineSource::Kind::kEnd) {
      if (header_pending_) return Status::InvalidArgument(source_->path() + ": expected a header line, found none");
      if (Status s = SettleBlankLinesAfterPiece(); !s.ok()) return s;
      source_.reset();  // pending blank lines were trailing: not records
      continue;
    }
    if (*kind == LineSource::Kind::kTooLong) {
      const std::string detail = "longer than " + std::to_string(kMaxLineBytes) + " bytes";
      if (header_pending_) return Status::InvalidArgument(RecordMessage(source_->Where(), "header too long", detail));
      if (Status s = FlushBlankLines(); !s.ok()) return s;
      first_data_line_ = false;
      if (Status s = log_.Report(source_->Where(), "line too long", detail); !s.ok()) return s;
      continue;
    }
    if (format_->IsComment(*line)) continue;
    if (header_pending_) {
      header_pending_ = false;
      if (Status s = format_->CheckHeader(source_->path(), *line); !s.ok()) return s;
      continue;
    }
    if (IsBlank(*line)) {
      if (blank_count_++ == 0) first_blank_ = source_->line_number();
      continue;
    }
    if (Status s = FlushBlankLines(); !s.ok()) return s;
    *got = true;
    return Status::Ok();
  }
}

bool RecordScanner::Finite(const RawRecord& record) {
  const long j = FirstNonFinite(record.dense.data(), record.dense.size());
  if (j < 0) return true;
  // A value the format parsed but that is no float: a dense transform's
  // overflow (1e39 as a float), say.
  error_ = {"non-finite dense value",
            format_->dense_names()[static_cast<size_t>(j)] + " is " + ValueText(record.dense[static_cast<size_t>(j)]) +
                " as a 32-bit float, expected a finite number"};
  return false;
}

Status RecordScanner::Next(RawRecord* out, bool* got) {
  if (!failed_.ok()) return failed_;
  for (;;) {
    std::string_view line;
    if (Status s = NextLine(&line, got); !s.ok()) return Fail(std::move(s));
    if (!*got) return Status::Ok();
    if (format_->Parse(line, out, &error_) && Finite(*out)) {
      first_data_line_ = false;
      return Status::Ok();
    }
    if (error_.column_count && first_data_line_) {
      return Fail(
          Status::InvalidArgument(RecordMessage(source_->Where(), "schema does not match the file", error_.detail)));
    }
    first_data_line_ = false;
    if (Status s = log_.Report(source_->Where(), error_.reason, error_.detail); !s.ok()) return Fail(std::move(s));
  }
}

}  // namespace actorrec::data::readers
