// Criteo TSV lines, gzip-compressed with zlib.
#include "data/gen/criteo_text.hpp"

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

namespace actorrec::data::gen {

Status AppendCriteoLines(const SampleBlock& block, std::string* out) {
  if (block.num_dense != kCriteoTextDense || block.tables.size() != kCriteoTextTables) {
    return Status::InvalidArgument("Criteo text needs 13 dense features and 26 tables, not " +
                                   std::to_string(block.num_dense) + " and " + std::to_string(block.tables.size()));
  }
  char field[24];
  for (size_t i = 0; i < block.size(); ++i) {
    out->push_back(block.labels[i] > 0.5f ? '1' : '0');
    for (size_t j = 0; j < kCriteoTextDense; ++j) {
      const double count = std::round(std::expm1(static_cast<double>(block.dense[i * kCriteoTextDense + j])));
      std::snprintf(field, sizeof field, "\t%lld", static_cast<long long>(count));
      out->append(field);
    }
    for (size_t t = 0; t < kCriteoTextTables; ++t) {
      const auto& table = block.tables[t];
      const uint32_t begin = table.offsets[i];
      if (table.offsets[i + 1] - begin != 1) {
        return Status::InvalidArgument("Criteo text holds one value per table; sample " + std::to_string(i) +
                                       " has " + std::to_string(table.offsets[i + 1] - begin) + " in table " +
                                       std::to_string(t) + " (use bag = \"fixed\", bag_min = 1)");
      }
      const uint32_t value = static_cast<uint32_t>(table.values[begin]) * 0x9E3779B1u +
                             static_cast<uint32_t>(t) * 0x7F4A7C15u + 1u;
      std::snprintf(field, sizeof field, "\t%08x", value);
      out->append(field);
    }
    out->push_back('\n');
  }
  return Status::Ok();
}

Result<uint64_t> WriteCriteoGzip(SampleReader& source, uint64_t samples, const std::string& path) {
  const std::string tmp = path + ".tmp";
  gzFile file = gzopen(tmp.c_str(), "wb6");
  if (file == nullptr) return Status::IoError("cannot create " + tmp);
  uint64_t written = 0;
  SampleBlock block;
  std::string text;
  Status status;
  while (written < samples && status.ok()) {
    status = source.Next(static_cast<size_t>(std::min<uint64_t>(samples - written, 4096)), &block);
    if (!status.ok() || block.empty()) break;
    text.clear();
    status = AppendCriteoLines(block, &text);
    if (status.ok() && gzwrite(file, text.data(), static_cast<unsigned>(text.size())) != static_cast<int>(text.size())) {
      status = Status::IoError("cannot write " + tmp);
    }
    written += block.size();
  }
  if (gzclose(file) != Z_OK && status.ok()) status = Status::IoError("cannot write " + tmp);
  std::error_code ec;
  if (status.ok()) std::filesystem::rename(tmp, path, ec);
  if (status.ok() && ec) status = Status::IoError("cannot rename " + tmp + " to " + path + ": " + ec.message());
  if (!status.ok()) {
    std::filesystem::remove(tmp, ec);
    return status;
  }
  return written;
}

}  // namespace actorrec::data::gen
