// Streaming, atomic writing of dataset files.
#include "data/format/dataset_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <utility>

#include "base/digest.hpp"
#include "data/format/chunk.hpp"
#include "data/format/layout.hpp"
#include "data/sample_values.hpp"

namespace actorrec::data::format {
namespace {

// Row ids are 32-bit (sample_block.hpp), so ids < 2^32 cover any table.
constexpr uint64_t kMaxRows = uint64_t{1} << 32;
// A chunk's columns must stay far below 4 GiB so u32 offsets cannot wrap.
constexpr uint32_t kMaxSamplesPerChunk = uint32_t{1} << 24;

template <class T>
void Put(std::string* out, T v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof v);
}

Status Errno(const std::string& what, const std::string& path) {
  return Status::IoError(what + " " + path + ": " + std::strerror(errno));
}

// Makes a rename durable; best effort, since some file systems refuse to
// open or sync a directory and the data itself is already synced.
void SyncParentDir(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  const char* dir = parent.empty() ? "." : parent.c_str();
  const int fd = ::open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

Result<std::unique_ptr<DatasetWriter>> DatasetWriter::Create(const std::string& path, const DatasetSchema& schema,
                                                             DatasetWriterOptions options) {
  if (options.samples_per_chunk == 0 || options.samples_per_chunk > kMaxSamplesPerChunk) {
    return Status::InvalidArgument(path + ": samples per chunk must be in [1, 2^24], not " +
                                   std::to_string(options.samples_per_chunk));
  }
  if (!options.multi_hot.empty() && options.multi_hot.size() != schema.num_tables()) {
    return Status::InvalidArgument(path + ": " + std::to_string(options.multi_hot.size()) + " multi-hot flags for " +
                                   std::to_string(schema.num_tables()) + " tables");
  }
  for (const auto& table : schema.tables) {
    if (table.rows > kMaxRows) {
      return Status::InvalidArgument(path + ": table " + table.name + " has " + std::to_string(table.rows) +
                                     " rows, more than 32-bit row ids address");
    }
  }
  const std::string tmp_path = path + ".tmp";
  const int fd = ::open(tmp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("cannot create", tmp_path);
  std::unique_ptr<DatasetWriter> writer(new DatasetWriter(path, schema, std::move(options), fd));
  // The header is rewritten by Finish; until then the file has none.
  Status status = writer->WriteAll(std::string(HeaderBytes(schema), '\0'));
  if (!status.ok()) return status;
  return writer;
}

DatasetWriter::DatasetWriter(std::string path, DatasetSchema schema, DatasetWriterOptions options, int fd)
    : path_(std::move(path)),
      tmp_path_(path_ + ".tmp"),
      schema_(std::move(schema)),
      samples_per_chunk_(options.samples_per_chunk),
      durable_(options.durable),
      multi_hot_(std::move(options.multi_hot)),
      multi_hot_decided_(!multi_hot_.empty() || schema_.num_tables() == 0),
      fd_(fd),
      offset_(HeaderBytes(schema_)) {
  chunk_.Reset(schema_);
  if (multi_hot_.empty()) multi_hot_.assign(schema_.num_tables(), false);
}

DatasetWriter::~DatasetWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!finished_) ::unlink(tmp_path_.c_str());
}

Status DatasetWriter::Fail(Status status) {
  if (status_.ok()) status_ = std::move(status);
  return status_;
}

Status DatasetWriter::WriteAll(const std::string& bytes) {
  const char* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Fail(Errno("cannot write", tmp_path_));
    p += n;
    left -= static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status DatasetWriter::CheckBlock(const SampleBlock& block) const {
  const size_t n = block.size();
  const auto bad = [&](const std::string& what) { return Status::InvalidArgument(path_ + ": appended block " + what); };
  if (block.num_dense != schema_.num_dense() || block.dense.size() != n * schema_.num_dense()) {
    return bad("does not have " + std::to_string(schema_.num_dense()) + " dense features per sample");
  }
  if (block.tables.size() != schema_.num_tables()) {
    return bad("has " + std::to_string(block.tables.size()) + " tables, the schema " +
               std::to_string(schema_.num_tables()));
  }
  // The readers refuse these already; this keeps any other source (and a
  // reader's bug) from writing a file that trains to NaN.
  for (size_t i = 0; i < n; ++i) {
    if (!IsLabel(block.labels[i])) {
      return bad("has label " + ValueText(block.labels[i]) + " at sample " + std::to_string(samples() + i) +
                 ", expected 0 or 1");
    }
  }
  if (const long at = FirstNonFinite(block.dense.data(), block.dense.size()); at >= 0) {
    const auto k = static_cast<size_t>(at);
    return bad("has a non-finite dense value at sample " + std::to_string(samples() + k / schema_.num_dense()) +
               ": " + schema_.dense_names[k % schema_.num_dense()] + " is " + ValueText(block.dense[k]));
  }
  for (size_t t = 0; t < schema_.num_tables(); ++t) {
    const SampleBlock::Table& table = block.tables[t];
    const TableSchema& ts = schema_.tables[t];
    if (table.offsets.size() != n + 1 || table.offsets.back() > table.values.size()) {
      return bad("has malformed offsets for table " + ts.name);
    }
    for (size_t i = 0; i < n; ++i) {
      if (table.offsets[i] > table.offsets[i + 1]) return bad("has decreasing offsets for table " + ts.name);
    }
    for (size_t k = table.offsets.front(); k < table.offsets.back(); ++k) {
      if (table.values[k] >= ts.rows) {
        return bad("has row id " + std::to_string(table.values[k]) + " in table " + ts.name + ", which has " +
                   std::to_string(ts.rows) + " rows");
      }
    }
  }
  return Status::Ok();
}

Status DatasetWriter::CheckSingleHot(const SampleBlock& block, size_t begin, size_t end) const {
  for (size_t t = 0; t < schema_.num_tables(); ++t) {
    if (multi_hot_[t]) continue;
    const auto& offsets = block.tables[t].offsets;
    for (size_t i = begin; i < end; ++i) {
      if (offsets[i + 1] - offsets[i] != 1) {
        return Status::InvalidArgument(path_ + ": sample " + std::to_string(samples() + (i - begin)) + " has " +
                                       std::to_string(offsets[i + 1] - offsets[i]) + " ids in single-hot table " +
                                       schema_.tables[t].name + " (set DatasetWriterOptions::multi_hot)");
      }
    }
  }
  return Status::Ok();
}

Status DatasetWriter::Append(const SampleBlock& block) {
  ACTORREC_ASSERT(!finished_, "Append after Finish");
  if (!status_.ok()) return status_;
  if (Status s = CheckBlock(block); !s.ok()) return Fail(std::move(s));
  for (size_t i = 0; i < block.size();) {
    const size_t end = std::min(block.size(), i + (samples_per_chunk_ - chunk_.size()));
    if (multi_hot_decided_) {
      if (Status s = CheckSingleHot(block, i, end); !s.ok()) return Fail(std::move(s));
    }
    chunk_.Append(block, i, end);
    i = end;
    if (chunk_.size() == samples_per_chunk_) {
      if (Status s = FlushChunk(); !s.ok()) return s;
    }
  }
  return Status::Ok();
}

Status DatasetWriter::FlushChunk() {
  if (!multi_hot_decided_) {
    // The first chunk decides: a table is single-hot if every sample in it
    // has exactly one id. Later samples are held to that.
    for (size_t t = 0; t < schema_.num_tables(); ++t) {
      const auto& offsets = chunk_.tables[t].offsets;
      for (size_t i = 0; i < chunk_.size() && !multi_hot_[t]; ++i) multi_hot_[t] = offsets[i + 1] - offsets[i] != 1;
    }
    multi_hot_decided_ = true;
  }
  const uint64_t index = index_.size() / kIndexEntryBytes;
  EncodeChunk(chunk_, multi_hot_, index, &encoded_);
  if (Status s = WriteAll(encoded_); !s.ok()) return s;
  Put<uint64_t>(&index_, offset_);
  Put<uint64_t>(&index_, encoded_.size());
  offset_ += encoded_.size();
  num_samples_ += chunk_.size();
  chunk_.Reset(schema_);
  return Status::Ok();
}

Result<uint64_t> DatasetWriter::Finish() {
  ACTORREC_ASSERT(!finished_, "Finish twice");
  if (!status_.ok()) return status_;
  if (!chunk_.empty()) {
    if (Status s = FlushChunk(); !s.ok()) return s;
  }
  multi_hot_decided_ = true;

  std::string tail = index_;
  Put<uint64_t>(&tail, offset_);
  Put<uint64_t>(&tail, index_.size() / kIndexEntryBytes);
  Put<uint64_t>(&tail, Digest64(index_));
  Put<uint64_t>(&tail, Digest64(std::string_view(tail).substr(index_.size())));
  if (Status s = WriteAll(tail); !s.ok()) return s;

  HeaderInfo info;
  info.schema = schema_;
  info.multi_hot = multi_hot_;
  info.num_samples = num_samples_;
  info.samples_per_chunk = samples_per_chunk_;
  info.file_bytes = offset_ + tail.size();
  const std::string header = EncodeHeader(info);
  if (::pwrite(fd_, header.data(), header.size(), 0) != static_cast<ssize_t>(header.size())) {
    return Fail(Errno("cannot write the header of", tmp_path_));
  }
  if (durable_ && ::fsync(fd_) != 0) return Fail(Errno("cannot sync", tmp_path_));
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) return Fail(Errno("cannot close", tmp_path_));
  if (::rename(tmp_path_.c_str(), path_.c_str()) != 0) return Fail(Errno("cannot rename " + tmp_path_ + " to", path_));
  finished_ = true;
  if (durable_) SyncParentDir(path_);
  return info.file_bytes;
}

}  // namespace actorrec::data::format
