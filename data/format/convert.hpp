// Convert: streams any SampleReader into a dataset file (what `actorrec data
// convert` runs), with bounded memory: one source block plus one chunk.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.hpp"
#include "data/format/dataset_writer.hpp"
#include "data/sample_reader.hpp"

namespace actorrec::data::format {

struct ConvertOptions {
  DatasetWriterOptions writer;
  // Samples asked of the source per Next: the size of the block in memory
  // besides the writer's chunk; beyond a few tens of thousands it only costs
  // memory.
  size_t block_samples = 65536;
  // What `source` reads ("data/train.txt"), for the error when it has no
  // samples.
  std::string source_name = "the source";
};

struct ConvertReport {
  uint64_t samples = 0;  // written
  uint64_t bytes = 0;    // of the dataset file
  size_t tables = 0;     // of its schema
  size_t dense = 0;      // dense features a sample
  double seconds = 0;    // wall clock, reading and writing
  BadRecords bad_records;  // what the source skipped under its policy
};

// Writes all of `source` to `out_path` atomically: on error no file appears
// there, and the status names the source's file and line or the output. A
// source without a single good sample is an error (data/bad_record_tally.hpp
// NoSamples), not an empty file.
Result<ConvertReport> Convert(SampleReader& source, const std::string& out_path, ConvertOptions options = {});

}  // namespace actorrec::data::format
