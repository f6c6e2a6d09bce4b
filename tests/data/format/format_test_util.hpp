// Random schemas and blocks, scratch directories and byte files for the
// dataset format tests.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "data/format/dataset_writer.hpp"
#include "data/sample_block.hpp"
#include "tests/support/temp_dir.hpp"

namespace actorrec::data::format::testing {

// 0..max_dense dense features and 1..max_tables tables of 1..1000 rows.
DatasetSchema RandomSchema(std::mt19937_64& rng, size_t max_dense, size_t max_tables);

// n random samples. Table t holds one id per sample unless multi_hot[t],
// then 0..3 ids. Uses raw engine output only (the engines are portable).
SampleBlock RandomBlock(std::mt19937_64& rng, const DatasetSchema& schema, const std::vector<bool>& multi_hot,
                        size_t n);

// Writer options with every field named: g++ 12 warns on designated
// initializers that leave out a class-type member.
DatasetWriterOptions WriterOptions(uint32_t samples_per_chunk, std::vector<bool> multi_hot = {});

// Field by field: TableSchema has no operator== (sample_block.hpp), so
// DatasetSchema's defaulted one is deleted.
bool SameSchema(const DatasetSchema& a, const DatasetSchema& b);

// Writes `samples` to `path`, appending them in random pieces (some empty).
void WriteInPieces(std::mt19937_64& rng, const std::string& path, const DatasetSchema& schema,
                   const SampleBlock& samples, const DatasetWriterOptions& options);

using ScratchDir = ::actorrec::testing::TempDir;
using ::actorrec::testing::ReadBytes;
using ::actorrec::testing::WriteBytes;

}  // namespace actorrec::data::format::testing
