// Encoding and decoding of Batch messages (messages/batch.capnp): the only
// code that touches the generated Batch accessors.
#pragma once

#include "base/status.hpp"
#include "data/batches/batch.hpp"
#include "messages/kinds.hpp"

namespace actorrec::wire {

// The batch in KJT form, or, when `ikjt` is given, its sparse features as
// that IKJT (which must be the dedup of batch.samples.tables).
Frame<Batch> EncodeBatch(const data::Batch& batch, const data::Ikjt* ikjt = nullptr);

// Reads a Batch frame into `out`, expanding an IKJT to the KJT. Checks the
// structure a receiver relies on: list lengths agree with the sample count,
// offsets start at 0, never decrease and end at the value count, every
// inverse index names an existing tuple, every table appears once. A frame
// that fails is Corruption naming the batch and the field. When `ikjt` is
// given it receives the frame's IKJT (empty for a KJT frame), so that the
// oracle plans the unique bags without deduplicating them again.
Status DecodeBatch(const Frame<Batch>& frame, data::Batch* out, data::Ikjt* ikjt = nullptr);

}  // namespace actorrec::wire
