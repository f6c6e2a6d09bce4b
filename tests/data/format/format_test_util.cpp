// Helpers shared by the dataset format tests.
#include "format_test_util.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace actorrec::data::format::testing {

DatasetSchema RandomSchema(std::mt19937_64& rng, size_t max_dense, size_t max_tables) {
  DatasetSchema schema;
  const size_t dense = rng() % (max_dense + 1);
  const size_t tables = 1 + rng() % max_tables;
  // Names built with append: g++ 12 gives a false -Wrestrict for
  // operator+(const char*, std::string&&) at -O2 (GCC bug 105329).
  for (size_t j = 0; j < dense; ++j) schema.dense_names.push_back(std::string("I").append(std::to_string(j + 1)));
  // Names of varied length so the header's padding is exercised.
  for (size_t t = 0; t < tables; ++t) {
    std::string name(1 + rng() % 9, 'C');
    name.append(std::to_string(t));
    schema.tables.push_back({name, 1 + rng() % 1000});
  }
  return schema;
}

SampleBlock RandomBlock(std::mt19937_64& rng, const DatasetSchema& schema, const std::vector<bool>& multi_hot,
                        size_t n) {
  SampleBlock block;
  block.Reset(schema);
  for (size_t i = 0; i < n; ++i) {
    block.labels.push_back(static_cast<float>(rng() % 2));
    for (size_t j = 0; j < schema.num_dense(); ++j) block.dense.push_back(static_cast<float>(rng() % 10000) / 7.0f);
    for (size_t t = 0; t < schema.num_tables(); ++t) {
      auto& table = block.tables[t];
      const size_t len = multi_hot[t] ? rng() % 4 : 1;
      for (size_t k = 0; k < len; ++k) table.values.push_back(static_cast<RowId>(rng() % schema.tables[t].rows));
      table.offsets.push_back(static_cast<uint32_t>(table.values.size()));
    }
  }
  return block;
}

DatasetWriterOptions WriterOptions(uint32_t samples_per_chunk, std::vector<bool> multi_hot) {
  DatasetWriterOptions options;
  options.samples_per_chunk = samples_per_chunk;
  options.multi_hot = std::move(multi_hot);
  return options;
}

bool SameSchema(const DatasetSchema& a, const DatasetSchema& b) {
  if (a.dense_names != b.dense_names || a.tables.size() != b.tables.size()) return false;
  for (size_t t = 0; t < a.tables.size(); ++t) {
    if (a.tables[t].name != b.tables[t].name || a.tables[t].rows != b.tables[t].rows) return false;
  }
  return true;
}

void WriteInPieces(std::mt19937_64& rng, const std::string& path, const DatasetSchema& schema,
                   const SampleBlock& samples, const DatasetWriterOptions& options) {
  auto writer = DatasetWriter::Create(path, schema, options);
  REQUIRE(writer.ok());
  for (size_t at = 0; at < samples.size();) {
    const size_t end = std::min(samples.size(), at + rng() % 20);
    SampleBlock piece;
    piece.Reset(schema);
    piece.Append(samples, at, end);
    REQUIRE((*writer)->Append(piece).ok());
    at = end;
  }
  auto bytes = (*writer)->Finish();
  REQUIRE(bytes.ok());
  REQUIRE(*bytes == std::filesystem::file_size(path));
}

}  // namespace actorrec::data::format::testing
