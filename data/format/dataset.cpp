// Opening a dataset file, checking it, and copying samples out of it.
#include "data/format/dataset.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include "base/digest.hpp"
#include "data/format/gather_plan.hpp"

namespace actorrec::data::format {
namespace {

template <class T>
T Get(std::string_view bytes, uint64_t at) {
  T v;
  std::memcpy(&v, bytes.data() + at, sizeof v);
  return v;
}

std::string Num(uint64_t n) { return std::to_string(n); }

// Copies ahead whose source is prefetched in a shuffled read: each copy
// reads its own cache line of a column, a miss to memory, and the loop body
// is a few instructions, so the miss must be asked for far ahead. Measured
// (format_bench, batches of 2048, single-hot Criteo shape): no prefetch 9.2 M
// samples/s with a window of 8 chunks and 4.4 M with a full permutation;
// 32 ahead 11–13 M and 6.3 M; 128 ahead 17.5–18.3 M and 10.1 M; 512 ahead
// less again (15–16 M, 7.7 M).
constexpr size_t kGatherPrefetch = 128;

// The bytes of a single-hot-only chunk of m samples, so the index can be
// checked exactly at open when no chunk has variable-length columns.
uint64_t FixedChunkBytes(const HeaderInfo& header, uint64_t m) {
  uint64_t bytes = Align8(m * 4) * (1 + header.schema.num_tables()) + Align8(m * header.schema.num_dense() * 4);
  return bytes + kChecksumBytes;
}

// Checks the file size, the footer and the index; returns where each chunk
// starts, plus the index's offset at the end.
Result<std::vector<uint64_t>> ParseTail(std::string_view file, const HeaderInfo& header, const std::string& path) {
  const uint64_t size = file.size();
  if (size < header.file_bytes) {
    return Status::Corruption(path + ": truncated: the file has " + Num(size) + " bytes, its header says " +
                              Num(header.file_bytes));
  }
  if (size > header.file_bytes) {
    return Status::Corruption(path + ": the file has " + Num(size) + " bytes, its header says " +
                              Num(header.file_bytes) + " (bytes appended?)");
  }
  if (size < header.header_bytes + kFooterBytes) return Status::Corruption(path + ": truncated: no room for a footer");
  const uint64_t footer = size - kFooterBytes;
  if (Get<uint64_t>(file, footer + 24) != Digest64(file.substr(footer, 24))) {
    return Status::Corruption(path + ": checksum mismatch in the footer");
  }
  const auto index_offset = Get<uint64_t>(file, footer);
  const auto chunks = Get<uint64_t>(file, footer + 8);
  if (chunks != header.num_chunks()) {
    return Status::Corruption(path + ": the footer lists " + Num(chunks) + " chunks, the header's " +
                              Num(header.num_samples) + " samples need " + Num(header.num_chunks()));
  }
  if (index_offset < header.header_bytes || index_offset > footer ||
      (footer - index_offset) / kIndexEntryBytes < chunks) {
    return Status::Corruption(path + ": truncated: index ends beyond the file");
  }
  if (footer - index_offset != chunks * kIndexEntryBytes) {
    return Status::Corruption(path + ": the index does not end where the footer starts");
  }
  const std::string_view index = file.substr(index_offset, chunks * kIndexEntryBytes);
  if (Get<uint64_t>(file, footer + 16) != Digest64(index)) {
    return Status::Corruption(path + ": checksum mismatch in the index");
  }

  const bool fixed = std::none_of(header.multi_hot.begin(), header.multi_hot.end(), [](bool b) { return b; });
  std::vector<uint64_t> start(chunks + 1);
  uint64_t expected = header.header_bytes;
  for (uint64_t c = 0; c < chunks; ++c) {
    const auto offset = Get<uint64_t>(index, c * kIndexEntryBytes);
    const auto bytes = Get<uint64_t>(index, c * kIndexEntryBytes + 8);
    const bool size_ok = fixed ? bytes == FixedChunkBytes(header, header.chunk_size(c))
                               : bytes >= kChecksumBytes && bytes % 8 == 0 && bytes <= index_offset - offset;
    if (offset != expected || !size_ok) return Status::Corruption(path + ": bad index entry for chunk " + Num(c));
    start[c] = offset;
    expected = offset + bytes;
  }
  if (expected != index_offset) return Status::Corruption(path + ": the chunks do not end where the index starts");
  start[chunks] = index_offset;
  return start;
}

}  // namespace

Result<std::unique_ptr<Dataset>> Dataset::Open(const std::string& path, DatasetOptions options) {
  Result<MappedFile> file = MappedFile::Open(path);
  if (!file.ok()) return file.status();
  const std::string_view bytes = file->bytes();
  Result<HeaderInfo> header = ParseHeader(bytes, path);
  if (!header.ok()) return header.status();
  Result<std::vector<uint64_t>> start = ParseTail(bytes, *header, path);
  if (!start.ok()) return start.status();
  std::unique_ptr<Dataset> dataset(
      new Dataset(path, std::move(file).value(), std::move(header).value(), std::move(start).value()));
  if (options.verify_at_open) {
    for (uint64_t c = 0; c < dataset->num_chunks(); ++c) {
      if (Status s = dataset->VerifyChunk(c); !s.ok()) return s;
    }
  }
  return dataset;
}

Dataset::Dataset(std::string path, MappedFile file, HeaderInfo header, std::vector<uint64_t> chunk_start)
    : path_(std::move(path)),
      file_(std::move(file)),
      header_(std::move(header)),
      chunk_start_(std::move(chunk_start)),
      verified_(new std::atomic<bool>[chunk_start_.size()]) {
  for (size_t c = 0; c < chunk_start_.size(); ++c) verified_[c].store(false, std::memory_order_relaxed);
}

std::string_view Dataset::chunk_bytes() const {
  return file_.bytes().substr(header_.header_bytes, chunk_start_.back() - header_.header_bytes);
}

Status Dataset::VerifyChunk(uint64_t chunk) const {
  ChunkView view;
  return View(chunk, &view);
}

Status Dataset::View(uint64_t chunk, ChunkView* view) const {
  const std::string_view bytes =
      file_.bytes().substr(chunk_start_[chunk], chunk_start_[chunk + 1] - chunk_start_[chunk]);
  // Acquire pairs with the release below: a thread that sees `true` sees a
  // chunk that some thread verified. Failures are not remembered; a corrupt
  // chunk is re-checked (and fails again) on every read.
  const bool verify = !verified_[chunk].load(std::memory_order_acquire);
  Status status = ParseChunk(bytes, header_, chunk, verify, path_, view);
  if (verify && status.ok()) verified_[chunk].store(true, std::memory_order_release);
  return status;
}

Status Dataset::Read(uint64_t begin, uint64_t end, SampleBlock* out) const {
  if (begin > end || end > size()) {
    return Status::InvalidArgument(path_ + ": samples [" + Num(begin) + ", " + Num(end) + ") are not in [0, " +
                                   Num(size()) + ")");
  }
  const uint64_t num_dense = header_.schema.num_dense();
  out->Reset(header_.schema);
  out->labels.reserve(end - begin);
  out->dense.reserve((end - begin) * num_dense);
  ChunkView view;
  for (uint64_t at = begin; at < end;) {
    const uint64_t chunk = ChunkOf(at);
    if (Status s = View(chunk, &view); !s.ok()) return s;
    const uint64_t first = chunk * header_.samples_per_chunk;
    const uint64_t lo = at - first;
    const uint64_t hi = std::min<uint64_t>(end - first, view.size);
    out->labels.insert(out->labels.end(), view.labels + lo, view.labels + hi);
    out->dense.insert(out->dense.end(), view.dense + lo * num_dense, view.dense + hi * num_dense);
    for (size_t t = 0; t < view.tables.size(); ++t) {
      const ChunkView::Table& in = view.tables[t];
      SampleBlock::Table& table = out->tables[t];
      const uint64_t base = table.values.size();
      const uint64_t value_lo = in.offsets ? in.offsets[lo] : lo;
      const uint64_t value_hi = in.offsets ? in.offsets[hi] : hi;
      if (base + (value_hi - value_lo) > std::numeric_limits<uint32_t>::max()) {
        return Status::InvalidArgument(path_ + ": more than 2^32 ids of table " + header_.schema.tables[t].name +
                                       " in one read");
      }
      table.values.insert(table.values.end(), in.values + value_lo, in.values + value_hi);
      const size_t n = table.offsets.size();
      // Single-hot so far and here: the offsets stay in their compact form
      // (0, 1, …, n; nothing written).
      if (in.offsets == nullptr && table.offsets.compact() && n == base + 1) {
        table.offsets.SetSingleHot(base + (hi - lo));
        continue;
      }
      table.offsets.resize(n + (hi - lo));
      uint32_t* offsets = table.offsets.data() + n;
      for (uint64_t i = lo; i < hi; ++i) {
        offsets[i - lo] = static_cast<uint32_t>(base + (in.offsets ? in.offsets[i + 1] - value_lo : i + 1 - lo));
      }
    }
    at = first + hi;
  }
  return Status::Ok();
}

Status Dataset::ReadSamples(std::span<const uint64_t> samples, SampleBlock* out) const {
  for (uint64_t sample : samples) {
    if (sample >= size()) {
      return Status::InvalidArgument(path_ + ": sample " + Num(sample) + " is not in [0, " + Num(size()) + ")");
    }
  }
  GatherPlan plan;
  PlanGather(samples, header_.samples_per_chunk, &plan);
  std::vector<ChunkView> views(plan.chunks.size());
  for (size_t v = 0; v < views.size(); ++v) {
    if (Status s = View(plan.chunks[v], &views[v]); !s.ok()) return s;
  }

  // Column by column in plan order; per column, each chunk's base pointer is
  // looked up once, so a copy costs one dependent load.
  const size_t k = samples.size();
  const size_t num_dense = header_.schema.num_dense();
  const uint32_t* slot = plan.slot.data();
  const uint32_t* row = plan.row.data();
  const uint32_t* dest = plan.dest.data();
  std::vector<const void*> base(views.size());
  const auto column = [&](auto pick) {
    for (size_t v = 0; v < views.size(); ++v) base[v] = pick(views[v]);
  };
  out->Reset(header_.schema);
  out->labels.resize(k);
  out->dense.resize(k * num_dense);
  column([](const ChunkView& view) { return view.labels; });
  for (size_t j = 0; j < k; ++j) {
    if (j + kGatherPrefetch < k) {
      __builtin_prefetch(static_cast<const float*>(base[slot[j + kGatherPrefetch]]) + row[j + kGatherPrefetch]);
    }
    out->labels[dest[j]] = static_cast<const float*>(base[slot[j]])[row[j]];
  }
  column([](const ChunkView& view) { return view.dense; });
  for (size_t j = 0; j < k; ++j) {
    if (j + kGatherPrefetch < k) {
      const float* ahead = static_cast<const float*>(base[slot[j + kGatherPrefetch]]) + row[j + kGatherPrefetch] * num_dense;
      __builtin_prefetch(ahead);
      __builtin_prefetch(ahead + num_dense - 1);  // a row may straddle two lines
    }
    std::memcpy(out->dense.data() + dest[j] * num_dense, static_cast<const float*>(base[slot[j]]) + row[j] * num_dense,
                num_dense * sizeof(float));
  }
  for (size_t t = 0; t < header_.schema.num_tables(); ++t) {
    SampleBlock::Table& table = out->tables[t];
    if (!header_.multi_hot[t]) {
      column([t](const ChunkView& view) { return view.tables[t].values; });
      table.values.resize(k);
      RowId* values = table.values.data();
      for (size_t j = 0; j < k; ++j) {
        if (j + kGatherPrefetch < k) {
          __builtin_prefetch(static_cast<const RowId*>(base[slot[j + kGatherPrefetch]]) + row[j + kGatherPrefetch]);
        }
        values[dest[j]] = static_cast<const RowId*>(base[slot[j]])[row[j]];
      }
      table.offsets.SetSingleHot(k);
      continue;
    }
    table.offsets.resize(k + 1);
    // Bag lengths into offsets[dest + 1], prefix sums in batch order, then the bags.
    column([t](const ChunkView& view) { return view.tables[t].offsets; });
    for (size_t j = 0; j < k; ++j) {
      if (j + kGatherPrefetch < k) {
        __builtin_prefetch(static_cast<const uint32_t*>(base[slot[j + kGatherPrefetch]]) + row[j + kGatherPrefetch]);
      }
      const uint32_t* in = static_cast<const uint32_t*>(base[slot[j]]) + row[j];
      table.offsets[dest[j] + 1] = in[1] - in[0];
    }
    uint64_t total = 0;
    for (size_t i = 0; i < k; ++i) {
      total += table.offsets[i + 1];
      if (total > std::numeric_limits<uint32_t>::max()) {
        return Status::InvalidArgument(path_ + ": more than 2^32 ids of table " + header_.schema.tables[t].name +
                                       " in one read");
      }
      table.offsets[i + 1] = static_cast<uint32_t>(total);
    }
    table.values.resize(total);
    for (size_t j = 0; j < k; ++j) {
      if (j + kGatherPrefetch < k) {  // its offsets were just read above, so the bag's place is at hand
        const ChunkView::Table& ahead = views[slot[j + kGatherPrefetch]].tables[t];
        __builtin_prefetch(ahead.values + ahead.offsets[row[j + kGatherPrefetch]]);
      }
      const ChunkView::Table& in = views[slot[j]].tables[t];
      const uint32_t first = in.offsets[row[j]];
      std::memcpy(table.values.data() + table.offsets[dest[j]], in.values + first,
                  (in.offsets[row[j] + 1] - first) * sizeof(RowId));
    }
  }
  return Status::Ok();
}

Status Dataset::ReadBatch(const EpochOrder& order, uint64_t batch, SampleBlock* out) const {
  ACTORREC_ASSERT(order.num_samples() == size() && order.samples_per_chunk() == samples_per_chunk(),
                  "the order is over another dataset");
  if (batch >= order.num_batches()) {
    return Status::InvalidArgument(path_ + ": batch " + Num(batch) + " is not in [0, " + Num(order.num_batches()) +
                                   ")");
  }
  if (!order.options().shuffle) return Read(order.BatchBegin(batch), order.BatchEnd(batch), out);
  std::vector<uint64_t> samples;
  order.BatchSamples(batch, &samples);
  return ReadSamples(samples, out);
}

}  // namespace actorrec::data::format
