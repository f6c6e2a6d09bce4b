// A deterministic held-out split of one sample stream (dataset.eval_fraction):
// sample i of the stream (counting from 0 in reading order) is held out when
// Mix(i) / 2^64 < fraction, a fixed hash of the index alone. So the train
// and eval sides of one set of files never share a sample and together are
// the whole stream, the split is the same on every run and for every
// run.seed (evaluations of different seeds compare on the same samples), and
// it does not depend on how the reader cuts blocks. About `fraction` of the
// samples are held out, spread evenly over the files.
#pragma once

#include <cstdint>
#include <memory>

#include "data/sample_reader.hpp"

namespace actorrec::data {

// Whether sample `index` of a stream is held out at `fraction`.
bool HeldOut(uint64_t index, double fraction);

// `inner`'s samples that are held out (held_out_side) or the others.
std::unique_ptr<SampleReader> HoldOutSplit(std::unique_ptr<SampleReader> inner, double fraction, bool held_out_side);

}  // namespace actorrec::data
