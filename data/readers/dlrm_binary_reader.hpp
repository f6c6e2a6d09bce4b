// DLRM reference preprocessed binary (facebookresearch/dlrm, the
// "--memory-map" / "*.bin" outputs of data_utils.py): fixed-size samples of
// little-endian int32, label, num_dense dense, num_tables sparse ids already
// mapped to rows; 40 values (160 bytes) for Criteo. Dense values get
// log(1 + max(x, 0)) as the reference's data loader applies.
//
// Checks: a file whose size is not a multiple of the sample size has a
// truncated last sample (an error under kFail at Open, before any sample is
// handed out; a counted bad record under kSkip). Labels other than 0/1 and
// ids outside [0, rows) are bad records; they are also how a misaligned
// file (cut or shifted by a few bytes) shows itself. Messages name the file
// and the 0-based sample index with its byte offset.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.hpp"
#include "data/sample_reader.hpp"

namespace actorrec::data::readers {

struct DlrmBinaryOptions {
  size_t num_dense = 13;
  // One cardinality per table (26 for Criteo): ids must be below it.
  std::vector<uint64_t> table_rows;
};

// Dense names I1.., tables C1.. with the given rows. Empty files are an
// error under both policies.
Result<std::unique_ptr<SampleReader>> OpenDlrmBinary(std::vector<std::string> paths, DlrmBinaryOptions options,
                                                     BadRecordPolicy policy);

}  // namespace actorrec::data::readers
