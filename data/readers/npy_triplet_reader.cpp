// TorchRec NumPy triplet reading.
#include "data/readers/npy_triplet_reader.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "data/readers/bad_record_log.hpp"
#include "data/readers/binary_checks.hpp"
#include "data/readers/fields.hpp"
#include "data/readers/npy_header.hpp"
#include "data/readers/posix_file.hpp"

namespace actorrec::data::readers {
namespace {

static_assert(std::endian::native == std::endian::little, "the binary readers decode by memcpy");

// Samples per read: 32 Ki samples of Criteo shape are ~5 MiB over the three
// files, in line with the text readers' 4 MiB chunks.
constexpr size_t kChunkSamples = 32 << 10;

struct Column {
  ReadFile file;
  NpyHeader header;
  size_t row_bytes = 0;  // bytes per sample
};

struct Day {
  Column dense, sparse, labels;
  uint64_t samples = 0;
};

Result<Column> OpenColumn(const std::string& path) {
  auto file = ReadFile::Open(path);
  if (!file.ok()) return file.status();
  auto header = ReadNpyHeader(*file);
  if (!header.ok()) return header.status();
  Column c{std::move(file).value(), std::move(header).value(), 0};
  uint64_t per_row = c.header.item_bytes;
  for (size_t i = 1; i < c.header.shape.size(); ++i) per_row *= c.header.shape[i];
  c.row_bytes = static_cast<size_t>(per_row);
  return c;
}

int64_t IntAt(const char* p, NpyType type) {
  if (type == NpyType::kInt64) {
    int64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

class NpyTripletReader final : public SampleReader {
 public:
  NpyTripletReader(std::vector<Day> days, size_t num_dense, NpyTripletOptions options, BadRecordPolicy policy)
      : days_(std::move(days)), num_dense_(num_dense), options_(std::move(options)), log_(policy) {
    for (size_t j = 0; j < num_dense_; ++j) schema_.dense_names.push_back(Numbered("I", j + 1));
    for (size_t t = 0; t < options_.table_rows.size(); ++t) {
      schema_.tables.push_back({Numbered("C", t + 1), options_.table_rows[t]});
    }
    rows_.resize(options_.table_rows.size());
  }

  const DatasetSchema& schema() const override { return schema_; }
  const BadRecords& bad_records() const override { return log_.records(); }

  Status Next(size_t max_samples, SampleBlock* out) override {
    out->Reset(schema_);
    if (!failed_.ok()) return failed_;
    while (out->size() < max_samples && day_ < days_.size()) {
      const Day& day = days_[day_];
      if (sample_ == day.samples) {
        ++day_;
        sample_ = 0;
        continue;
      }
      const size_t k =
          static_cast<size_t>(std::min<uint64_t>({max_samples - out->size(), day.samples - sample_, kChunkSamples}));
      const auto read = [&](const Column& column, std::vector<char>* buf) {
        buf->resize(k * column.row_bytes);
        return column.file.ReadAt(column.header.data_offset + sample_ * column.row_bytes, buf->data(), buf->size());
      };
      Status s = read(day.dense, &dense_buf_);
      if (s.ok()) s = read(day.sparse, &sparse_buf_);
      if (s.ok()) s = read(day.labels, &label_buf_);
      if (!s.ok()) return Fail(out, s);
      for (size_t i = 0; i < k; ++i, ++sample_) {
        if (Status s = Decode(day, i, out); !s.ok()) return Fail(out, s);
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

  Status Report(const Column& column, const char* reason, const std::string& detail) {
    const uint64_t offset = column.header.data_offset + sample_ * column.row_bytes;
    return log_.Report(SampleWhere(column.file.path(), sample_, offset), reason, detail);
  }

  // Checks sample i of the chunk and appends it, or reports a bad record.
  Status Decode(const Day& day, size_t i, SampleBlock* out) {
    const char* label_at = label_buf_.data() + i * day.labels.row_bytes;
    double raw_label = 0;
    if (day.labels.header.type == NpyType::kFloat32) {
      float f;
      std::memcpy(&f, label_at, 4);
      raw_label = f;
    } else {
      raw_label = static_cast<double>(IntAt(label_at, day.labels.header.type));
    }
    float label = 0;
    if (!LabelOf(raw_label, &label)) {
      return Report(day.labels, "unknown label value", "label is " + std::to_string(raw_label) + ", expected 0 or 1");
    }
    const char* dense_at = dense_buf_.data() + i * day.dense.row_bytes;
    for (size_t j = 0; j < num_dense_; ++j) {
      float f;
      std::memcpy(&f, dense_at + 4 * j, 4);
      if (!std::isfinite(f)) {
        return Report(day.dense, "non-finite dense value", schema_.dense_names[j] + " is " + std::to_string(f));
      }
    }
    const char* sparse_at = sparse_buf_.data() + i * day.sparse.row_bytes;
    const size_t id_bytes = day.sparse.header.item_bytes;
    for (size_t t = 0; t < rows_.size(); ++t) {
      const int64_t id = IntAt(sparse_at + t * id_bytes, day.sparse.header.type);
      if (!RowOf(id, options_.table_rows[t], options_.modulo_rows, &rows_[t])) {
        return Report(day.sparse, "row id out of range",
                      schema_.tables[t].name + " is " + std::to_string(id) + ", expected [0, " +
                          std::to_string(options_.table_rows[t]) + ")");
      }
    }
    out->labels.push_back(label);
    const size_t at = out->dense.size();
    out->dense.resize(at + num_dense_);
    if (num_dense_ > 0) std::memcpy(out->dense.data() + at, dense_at, 4 * num_dense_);
    for (size_t t = 0; t < rows_.size(); ++t) out->tables[t].AppendSingle(rows_[t]);
    return Status::Ok();
  }

  std::vector<Day> days_;
  size_t num_dense_;
  NpyTripletOptions options_;
  BadRecordLog log_;
  DatasetSchema schema_;
  std::vector<char> dense_buf_, sparse_buf_, label_buf_;
  std::vector<RowId> rows_;
  size_t day_ = 0;
  uint64_t sample_ = 0;  // next sample of days_[day_]
  Status failed_;
};

// Checks one day's shapes and types; messages name the offending file.
Status CheckDay(const Day& day, size_t num_tables) {
  const auto bad = [](const Column& c, const std::string& what) {
    return Status::InvalidArgument(c.file.path() + ": " + what + ", found " + Describe(c.header));
  };
  if (day.dense.header.type != NpyType::kFloat32 || day.dense.header.shape.size() != 2) {
    return bad(day.dense, "expected dense features as float32 [n, num_dense]");
  }
  if (day.sparse.header.type == NpyType::kFloat32 || day.sparse.header.shape.size() != 2 ||
      day.sparse.header.shape[1] != num_tables) {
    return bad(day.sparse, "expected sparse ids as int32 or int64 [n, " + std::to_string(num_tables) + "]");
  }
  const auto& ls = day.labels.header.shape;
  if (ls.size() > 2 || (ls.size() == 2 && ls[1] != 1)) return bad(day.labels, "expected labels as [n] or [n, 1]");
  const uint64_t n = day.dense.header.shape[0];
  if (day.sparse.header.shape[0] != n || ls[0] != n) {
    return Status::InvalidArgument("the day's files disagree on the sample count: " + day.dense.file.path() + " has " +
                                   std::to_string(n) + ", " + day.sparse.file.path() + " has " +
                                   std::to_string(day.sparse.header.shape[0]) + ", " + day.labels.file.path() +
                                   " has " + std::to_string(ls[0]));
  }
  return Status::Ok();
}

}  // namespace

NpyDayFiles TorchRecDayFiles(const std::string& dir, int day) {
  const std::string stem = dir + "/day_" + std::to_string(day) + "_";
  return {stem + "dense.npy", stem + "sparse.npy", stem + "labels.npy"};
}

Result<std::unique_ptr<SampleReader>> OpenNpyTriplets(std::vector<NpyDayFiles> paths, NpyTripletOptions options,
                                                      BadRecordPolicy policy) {
  if (options.table_rows.empty()) return Status::InvalidArgument("npy triplets: no table rows given");
  for (uint64_t rows : options.table_rows) {
    if (rows == 0 || rows > (uint64_t{1} << 32)) {
      return Status::InvalidArgument("npy triplets: table rows must be in [1, 2^32], got " + std::to_string(rows));
    }
  }
  std::vector<Day> days;
  size_t num_dense = 0;
  for (const auto& p : paths) {
    auto dense = OpenColumn(p.dense);
    if (!dense.ok()) return dense.status();
    auto sparse = OpenColumn(p.sparse);
    if (!sparse.ok()) return sparse.status();
    auto labels = OpenColumn(p.labels);
    if (!labels.ok()) return labels.status();
    Day day{std::move(dense).value(), std::move(sparse).value(), std::move(labels).value(), 0};
    if (Status s = CheckDay(day, options.table_rows.size()); !s.ok()) return s;
    const size_t d = static_cast<size_t>(day.dense.header.shape[1]);
    if (!days.empty() && d != num_dense) {
      return Status::InvalidArgument(p.dense + ": " + std::to_string(d) + " dense columns, the first day has " +
                                     std::to_string(num_dense));
    }
    num_dense = d;
    day.samples = day.dense.header.shape[0];
    days.push_back(std::move(day));
  }
  return std::unique_ptr<SampleReader>(new NpyTripletReader(std::move(days), num_dense, std::move(options), policy));
}

}  // namespace actorrec::data::readers
