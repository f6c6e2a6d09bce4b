// LineSource: chunked line reading with a carry-over for partial lines.
#include "data/readers/line_source.hpp"

#include <algorithm>
#include <cstring>

namespace actorrec::data::readers {

Result<LineSource> LineSource::Open(const std::string& path, size_t chunk_bytes, size_t max_line_bytes) {
  ACTORREC_ASSERT(chunk_bytes > 0 && max_line_bytes > 0, "chunk and line limits must be positive");
  auto file = DecodedFile::Open(path);
  if (!file.ok()) return file.status();
  LineSource source(std::move(file).value(), chunk_bytes, max_line_bytes);
  if (Status s = source.Refill(); !s.ok()) return s;
  if (source.end_ == 0) return Status::InvalidArgument(path + ": file is empty");
  return source;
}

Result<LineSource> LineSource::Open(const TextPiece& piece, size_t chunk_bytes, size_t max_line_bytes) {
  if (piece.first() && piece.last()) return Open(piece.path, chunk_bytes, max_line_bytes);
  ACTORREC_ASSERT(chunk_bytes > 0 && max_line_bytes > 0, "chunk and line limits must be positive");
  auto file = DecodedFile::Open(piece.path);
  if (!file.ok()) return file.status();
  // One byte early: a piece whose range starts a line must not skip it.
  const uint64_t start = piece.first() ? 0 : piece.begin - 1;
  if (Status s = file->SkipTo(start); !s.ok()) return s;
  LineSource source(std::move(file).value(), chunk_bytes, max_line_bytes);
  source.buf_offset_ = start;
  source.end_offset_ = piece.end;
  source.lines_before_ = piece.lines;
  if (Status s = source.Refill(); !s.ok()) return s;
  if (piece.first()) {
    if (source.end_ == 0) return Status::InvalidArgument(piece.path + ": file is empty");
  } else if (Status s = source.DiscardRestOfLine(); !s.ok()) {  // the line the range starts inside
    return s;
  }
  source.first_line_offset_ = source.buf_offset_ + source.begin_;
  return source;
}

std::string LineSource::WhereLine(uint64_t line) const {
  if (!line_base_ && first_line_offset_ == 0) line_base_ = 0;
  if (!line_base_ && lines_before_ != nullptr) line_base_ = lines_before_->Before(first_line_offset_);
  if (!line_base_) {
    return path() + ": line " + std::to_string(line) + " after byte " + std::to_string(first_line_offset_);
  }
  return path() + ":" + std::to_string(*line_base_ + line);
}

LineSource::LineSource(DecodedFile file, size_t chunk_bytes, size_t max_line_bytes)
    : file_(std::move(file)),
      chunk_bytes_(chunk_bytes),
      max_line_bytes_(max_line_bytes),
      buf_(new char[chunk_bytes + max_line_bytes]),
      buf_size_(chunk_bytes + max_line_bytes) {}

Status LineSource::Refill() {
  const size_t tail = end_ - begin_;
  if (begin_ > 0 && tail > 0) std::memmove(buf_.get(), buf_.get() + begin_, tail);
  buf_offset_ += begin_;
  begin_ = 0;
  end_ = tail;
  // Fill until at least one chunk's worth arrived or the file ended: read()
  // may return less than asked (pipes, network file systems).
  const size_t target = std::min(buf_size_, tail + chunk_bytes_);
  while (end_ < target && !eof_) {
    size_t got = 0;
    if (Status s = file_.Read(buf_.get() + end_, target - end_, &got); !s.ok()) return s;
    if (got == 0) eof_ = true;
    end_ += got;
  }
  return Status::Ok();
}

Status LineSource::DiscardRestOfLine() {
  for (;;) {
    const char* nl = static_cast<const char*>(std::memchr(buf_.get() + begin_, '\n', end_ - begin_));
    if (nl != nullptr) {
      begin_ = static_cast<size_t>(nl - buf_.get()) + 1;
      return Status::Ok();
    }
    begin_ = end_;
    if (eof_) return Status::Ok();
    if (Status s = Refill(); !s.ok()) return s;
  }
}

Result<LineSource::Kind> LineSource::Next(std::string_view* line) {
  for (;;) {
    if (buf_offset_ + begin_ >= end_offset_) return Kind::kEnd;  // the next piece's line
    const char* start = buf_.get() + begin_;
    const size_t avail = end_ - begin_;
    const char* nl = static_cast<const char*>(std::memchr(start, '\n', avail));
    size_t len = 0;
    if (nl != nullptr) {
      len = static_cast<size_t>(nl - start);
      begin_ += len + 1;
    } else if (avail > max_line_bytes_) {
      ++line_number_;
      begin_ = end_;
      if (Status s = DiscardRestOfLine(); !s.ok()) return s;
      *line = {};
      return Kind::kTooLong;
    } else if (!eof_) {
      if (Status s = Refill(); !s.ok()) return s;
      continue;
    } else if (avail == 0) {
      return Kind::kEnd;
    } else {
      len = avail;  // the last line has no trailing newline
      begin_ = end_;
    }
    ++line_number_;
    if (len > max_line_bytes_) {
      *line = {};
      return Kind::kTooLong;
    }
    if (len > 0 && start[len - 1] == '\r') --len;
    *line = std::string_view(start, len);
    return Kind::kLine;
  }
}

}  // namespace actorrec::data::readers
