// A snapshot piece (a shard's whole file: gigabytes at full scale) travels
// between members' keepers in chunks, each one message below the
// transport's 1 GiB frame bound, and is checked whole on arrival. Plain
// C++, no CAF; the keeper (snapshot_keeper.cpp) sends and receives them.
//
// The sender states the piece's size and XXH3 digest first; the receiver
// takes the chunks in order (a chunk at another offset than the next one is
// a missing or repeated chunk) and checks size and digest at the end, so a
// corrupted, missing or truncated chunk is an error naming the piece and the
// snapshot, and nothing is kept of it. Not thread-safe: one owner.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.hpp"

namespace actorrec::trainer {

// The largest chunk: 256 MiB, a quarter of the frame bound (CAF's own
// framing adds little, but a chunk also sits in the sender's and the
// receiver's memory at once). For tests only, the environment variable
// ACTORREC_SNAPSHOT_CHUNK_BYTES (a positive integer) sets it, so that a
// small file travels in several chunks (docs/reliability.md).
uint64_t PieceChunkBytes();

// How many chunks of at most `chunk` bytes a piece of `size` bytes takes
// (one for an empty piece).
uint64_t ChunkCount(uint64_t size, uint64_t chunk);

// The receiving end of one piece.
class PieceAssembly {
 public:
  // `what` names the piece in errors ("shard-0-of-2.ckpt of snapshot
  // batch-10 from member 't'").
  PieceAssembly(std::string what, uint64_t size, uint64_t digest);

  // The chunk that starts at `offset`: the next one, or a Corruption
  // naming the piece and both offsets.
  Status Add(uint64_t offset, std::string_view bytes);
  // The whole piece, once its size and digest are the announced ones;
  // Corruption naming the piece otherwise.
  Result<std::string> Finish();

  uint64_t chunks() const { return chunks_; }

 private:
  std::string what_;
  uint64_t size_ = 0, digest_ = 0, chunks_ = 0;
  std::string bytes_;
};

}  // namespace actorrec::trainer
