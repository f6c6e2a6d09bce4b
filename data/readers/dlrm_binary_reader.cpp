// DLRM reference binary reading.
#include "data/readers/dlrm_binary_reader.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

#include "data/readers/bad_record_log.hpp"
#include "data/readers/binary_checks.hpp"
#include "data/readers/dense_transform.hpp"
#include "data/readers/fields.hpp"
#include "data/readers/posix_file.hpp"

namespace actorrec::data::readers {
namespace {

static_assert(std::endian::native == std::endian::little, "the binary readers decode by memcpy");

// Samples per read: 4 MiB of 160-byte samples, the text readers' chunk size.
constexpr size_t kChunkBytes = size_t{4} << 20;

std::string TruncationDetail(uint64_t size, uint64_t record_bytes) {
  return "the file ends " + std::to_string(size % record_bytes) + " bytes into a " + std::to_string(record_bytes) +
         "-byte sample (size " + std::to_string(size) + " is not a multiple of it: truncated or misaligned)";
}

class DlrmBinaryReader final : public SampleReader {
 public:
  DlrmBinaryReader(std::vector<ReadFile> files, DlrmBinaryOptions options, BadRecordPolicy policy)
      : files_(std::move(files)), options_(std::move(options)), log_(policy) {
    for (size_t j = 0; j < options_.num_dense; ++j) schema_.dense_names.push_back(Numbered("I", j + 1));
    for (size_t t = 0; t < options_.table_rows.size(); ++t) {
      schema_.tables.push_back({Numbered("C", t + 1), options_.table_rows[t]});
    }
    values_ = 1 + options_.num_dense + options_.table_rows.size();
    record_bytes_ = 4 * values_;
    chunk_samples_ = std::max<size_t>(1, kChunkBytes / record_bytes_);
    buf_.resize(chunk_samples_ * values_);
    rows_.resize(options_.table_rows.size());
  }

  const DatasetSchema& schema() const override { return schema_; }
  const BadRecords& bad_records() const override { return log_.records(); }

  Status Next(size_t max_samples, SampleBlock* out) override {
    out->Reset(schema_);
    if (!failed_.ok()) return failed_;
    while (out->size() < max_samples && file_ < files_.size()) {
      const ReadFile& file = files_[file_];
      const uint64_t complete = file.size() / record_bytes_;
      if (sample_ == complete) {
        if (file.size() % record_bytes_ != 0) {
          if (Status s = log_.Report(SampleWhere(file.path(), complete, complete * record_bytes_), "truncated sample",
                                     TruncationDetail(file.size(), record_bytes_));
              !s.ok()) {
            return Fail(out, s);
          }
        }
        ++file_;
        sample_ = 0;
        continue;
      }
      const size_t k =
          static_cast<size_t>(std::min<uint64_t>({max_samples - out->size(), complete - sample_, chunk_samples_}));
      if (Status s = file.ReadAt(sample_ * record_bytes_, reinterpret_cast<char*>(buf_.data()), k * record_bytes_);
          !s.ok()) {
        return Fail(out, s);
      }
      for (size_t i = 0; i < k; ++i, ++sample_) {
        if (Status s = Decode(file.path(), buf_.data() + i * values_, out); !s.ok()) return Fail(out, s);
      }
    }
    return Status::Ok();
  }

 private:
  Status Fail(SampleBlock* out, Status s) {
    out->Reset(schema_);
    failed_ = s;
    return s;
  }

  // Checks one sample and appends it, or reports it as a bad record.
  Status Decode(const std::string& path, const int32_t* v, SampleBlock* out) {
    const auto report = [&](const char* reason, const std::string& detail) {
      return log_.Report(SampleWhere(path, sample_, sample_ * record_bytes_), reason, detail);
    };
    float label = 0;
    if (!LabelOf(v[0], &label))
      return report("unknown label value", "label is " + std::to_string(v[0]) + ", expected 0 or 1");
    const int32_t* ids = v + 1 + options_.num_dense;
    for (size_t t = 0; t < rows_.size(); ++t) {
      if (!RowOf(ids[t], options_.table_rows[t], false, &rows_[t])) {
        return report("row id out of range", schema_.tables[t].name + " is " + std::to_string(ids[t]) +
                                                 ", expected [0, " + std::to_string(options_.table_rows[t]) + ")");
      }
    }
    out->labels.push_back(label);
    for (size_t j = 0; j < options_.num_dense; ++j) out->dense.push_back(Log1pOfCount(v[1 + j]));
    for (size_t t = 0; t < rows_.size(); ++t) out->tables[t].AppendSingle(rows_[t]);
    return Status::Ok();
  }

  std::vector<ReadFile> files_;
  DlrmBinaryOptions options_;
  BadRecordLog log_;
  DatasetSchema schema_;
  size_t values_ = 0;  // int32 values per sample
  size_t record_bytes_ = 0;
  size_t chunk_samples_ = 0;
  std::vector<int32_t> buf_;
  std::vector<RowId> rows_;  // the sample being decoded
  size_t file_ = 0;
  uint64_t sample_ = 0;  // next sample of files_[file_]
  Status failed_;
};

}  // namespace

Result<std::unique_ptr<SampleReader>> OpenDlrmBinary(std::vector<std::string> paths, DlrmBinaryOptions options,
                                                     BadRecordPolicy policy) {
  if (options.table_rows.empty()) return Status::InvalidArgument("dlrm binary: no table rows given");
  for (uint64_t rows : options.table_rows) {
    if (rows == 0 || rows > (uint64_t{1} << 32)) {
      return Status::InvalidArgument("dlrm binary: table rows must be in [1, 2^32], got " + std::to_string(rows));
    }
  }
  const uint64_t record_bytes = 4 * (1 + options.num_dense + options.table_rows.size());
  std::vector<ReadFile> files;
  for (const auto& path : paths) {
    auto file = ReadFile::Open(path);
    if (!file.ok()) return file.status();
    if (file->size() == 0) return Status::InvalidArgument(path + ": file is empty");
    // Under kFail a truncated file fails here, before any of its samples
    // (or the files before it) are handed out.
    if (file->size() % record_bytes != 0 && policy == BadRecordPolicy::kFail) {
      const uint64_t at = file->size() / record_bytes;
      return Status::InvalidArgument(RecordMessage(SampleWhere(path, at, at * record_bytes), "truncated sample",
                                                   TruncationDetail(file->size(), record_bytes)));
    }
    files.push_back(std::move(file).value());
  }
  return std::unique_ptr<SampleReader>(new DlrmBinaryReader(std::move(files), std::move(options), policy));
}

}  // namespace actorrec::data::readers
