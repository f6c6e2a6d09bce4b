// Opens the samples a config's [dataset] describes, whatever their source:
// the generator, a raw format (Criteo TSV, Avazu CSV, schema CSV, the DLRM
// binary, TorchRec NumPy triplets) or actorrec's columnar format.
//
// Raw text sources map categorical values through a CategoricalMapping: it
// is loaded from dataset.mapping_file when that exists, and otherwise built
// from the training split (a counting pass for dictionaries) and saved there,
// so the evaluation split always maps the same way as training.
#pragma once

#include <memory>

#include "base/status.hpp"
#include "configs/config.hpp"
#include "data/crosses.hpp"
#include "data/format/parallel_convert.hpp"
#include "data/gen/generator_options.hpp"
#include "data/readers/text_reader.hpp"
#include "data/sample_reader.hpp"

namespace actorrec {

enum class Split { kTrain, kEval };
const char* SplitName(Split split);

// The reader of `split` as the model reads it: the source's tables, then
// one per model.crosses (data/crosses.hpp). The eval split of generated data
// is a stream of its own seed (disjoint from training); Failed preconditions
// (no eval_path, an unreadable file, a cross naming a table the data lacks)
// are errors naming the key or the file.
Result<std::unique_ptr<data::SampleReader>> OpenDatasetSplit(const config::Config& cfg, Split split);

// The source's own samples of `split`, without the crosses: what `data
// convert` writes (a converted file serves any model).
Result<std::unique_ptr<data::SampleReader>> OpenSourceSplit(const config::Config& cfg, Split split);

// model.crosses as the data layer takes them, each named by its key.
std::vector<data::CrossSpec> CrossSpecsOf(const config::ModelConfig& model);

// The input of `split` in units read one by one, for `data convert` in
// parallel (data/format/parallel_convert.hpp): reading the units in order,
// through `filter` when there is one, gives exactly OpenSourceSplit's
// samples. A unit is a file, or a piece of a plain text file larger than
// `counting.piece_bytes` (data/readers/text_piece.hpp). Every unit's reader
// shares the one categorical mapping, made here (loaded, or built on
// `counting`'s threads and saved) before any unit is opened. NotSupported
// for sources not read file by file (generated, actorrec).
struct SplitFiles {
  std::vector<std::string> paths;
  size_t units = 0;
  data::format::FileOpener open;      // reader of unit i alone
  data::format::StreamFilter filter;  // dataset.eval_fraction's side of the hold-out; else none
};
Result<SplitFiles> OpenSplitFiles(const config::Config& cfg, Split split,
                                  const data::readers::CountingOptions& counting = {});

// The samples of `epoch` of `split` in the order the sampler streams them:
// for actorrec dataset files the deterministic epoch order (shuffled from
// run.seed unless dataset.shuffle = false, batches of training.batch_size);
// every other source is read in its own order each epoch; crosses appended
// as OpenDatasetSplit's. A generated
// epoch keeps no Bayes-AUC record (training never asks for one; the reader
// of OpenDatasetSplit does), so streaming it costs no memory per sample.
Result<std::unique_ptr<data::SampleReader>> OpenEpoch(const config::Config& cfg, Split split, uint32_t epoch);

// What `split` reads, for messages: its file (dataset.path or eval_path),
// or "the generated data".
std::string SourceName(const config::Config& cfg, Split split);

// Whether the samples' schema is the one the config describes:
// dataset.dense_features must equal the data's dense columns, since the
// model's input width follows from it (a file's own schema silently taking
// over would train another model than the config says). The error names
// both values and the file. Every table of dataset.dedup_groups must exist
// in the data (the config itself cannot count every source's tables).
Status CheckSchema(const config::Config& cfg, const data::DatasetSchema& schema);

// The generator options the config describes for `split` (exposed for
// `actorrec data gen` and tests).
Result<data::gen::GeneratorOptions> GeneratorOptionsOf(const config::Config& cfg, Split split);

}  // namespace actorrec
