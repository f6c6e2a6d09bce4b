// The convert loop.
#include "data/format/convert.hpp"

#include <chrono>

#include "data/bad_record_tally.hpp"

namespace actorrec::data::format {

Result<ConvertReport> Convert(SampleReader& source, const std::string& out_path, ConvertOptions options) {
  const auto start = std::chrono::steady_clock::now();
  Result<std::unique_ptr<DatasetWriter>> writer = DatasetWriter::Create(out_path, source.schema(), options.writer);
  if (!writer.ok()) return writer.status();
  SampleBlock block;
  for (;;) {
    if (Status s = source.Next(options.block_samples, &block); !s.ok()) return s;
    if (block.empty()) break;
    if (Status s = (*writer)->Append(block); !s.ok()) return s;
  }
  if ((*writer)->samples() == 0) return NoSamples(options.source_name, source.bad_records());
  ConvertReport report;
  report.samples = (*writer)->samples();
  Result<uint64_t> bytes = (*writer)->Finish();
  if (!bytes.ok()) return bytes.status();
  report.bytes = *bytes;
  report.tables = source.schema().num_tables();
  report.dense = source.schema().num_dense();
  report.bad_records = source.bad_records();
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace actorrec::data::format
