// ParallelConvert: many input files into one dataset file, the files parsed
// by several threads at once, the output the same bytes whatever the number
// of threads or their timing.
//
// How: worker threads take the files in order (an atomic counter) and each
// writes its file into a part (an actorrec dataset file in a scratch folder
// beside the output, every table stored multi-hot so any bag fits). The
// calling thread reads the parts back strictly in file order, as one stream,
// through an optional filter (dataset.eval_fraction's hold-out, which counts
// samples over the whole stream) into the ordinary Convert. So the output is
// exactly what Convert of the files read one after the other writes; the
// threads only change when each file's parsing happens.
//
// The unit of parallel work is whatever `open` opens: the command line gives
// it pieces of the input (data/readers/text_piece.hpp): whole compressed
// files, and plain text files cut into byte ranges.
//
// Memory: each worker holds one source block and one chunk; the parts take
// disk space up to the output's size (more for single-hot tables, stored
// with offsets), and each is deleted once written into the output.
// Errors: the first failing file in file order is reported (its reader's
// status names the file and line), whichever thread met it first; on any
// error no output file appears and the scratch folder is removed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "base/status.hpp"
#include "data/format/convert.hpp"
#include "data/sample_reader.hpp"

namespace actorrec::data::format {

// Opens the reader of input file `file` (0-based, in output order). Called
// from worker threads, each call for a distinct file: what it shares (a
// categorical mapping) must be safe to read concurrently.
using FileOpener = std::function<Result<std::unique_ptr<SampleReader>>(size_t file)>;

// Wraps the ordered stream of all files' samples (e.g. data::HoldOutSplit).
using StreamFilter = std::function<std::unique_ptr<SampleReader>(std::unique_ptr<SampleReader>)>;

struct ConvertProgress {
  size_t files = 0;          // inputs in all
  size_t files_parsed = 0;   // parts finished by the workers
  size_t files_written = 0;  // parts copied into the output
  uint64_t samples = 0;      // samples read from the parts so far
  double seconds = 0;        // since the start
};

struct ParallelConvertOptions {
  ConvertOptions convert;
  // Worker threads; at most one per file is used. 0 = one per hardware thread.
  unsigned threads = 0;
  // Called on the calling thread at most every `progress_seconds` (while it
  // writes parts into the output or waits for one), and once at the end.
  std::function<void(const ConvertProgress&)> progress;
  double progress_seconds = 2.0;
  StreamFilter filter;  // none: every sample of every file
};

// Writes files 0 … num_files−1, in that order, into `out_path` (atomically:
// Convert's rules). Scratch parts go to `out_path`.parts/, which must not
// exist and is removed afterwards. An input with no samples adds nothing.
Result<ConvertReport> ParallelConvert(size_t num_files, const FileOpener& open, const std::string& out_path,
                                      ParallelConvertOptions options);

}  // namespace actorrec::data::format
