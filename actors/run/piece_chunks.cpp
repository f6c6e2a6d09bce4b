#include "actors/run/piece_chunks.hpp"

#include <cstdlib>

#include "base/digest.hpp"

namespace actorrec::trainer {

uint64_t PieceChunkBytes() {
  constexpr uint64_t kDefault = uint64_t{256} << 20;
  const char* knob = std::getenv("ACTORREC_SNAPSHOT_CHUNK_BYTES");
  if (knob == nullptr || *knob == '\0') return kDefault;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(knob, &end, 10);
  return (*end == '\0' && v > 0 && v <= kDefault) ? v : kDefault;
}

uint64_t ChunkCount(uint64_t size, uint64_t chunk) { return size == 0 ? 1 : (size + chunk - 1) / chunk; }

PieceAssembly::PieceAssembly(std::string what, uint64_t size, uint64_t digest)
    : what_(std::move(what)), size_(size), digest_(digest) {}

Status PieceAssembly::Add(uint64_t offset, std::string_view bytes) {
  if (offset != bytes_.size()) {
    return Status::Corruption(what_ + ": a chunk is missing or repeated: got the chunk at byte " +
                              std::to_string(offset) + ", expected the one at byte " + std::to_string(bytes_.size()));
  }
  if (bytes_.size() + bytes.size() > size_) {
    return Status::Corruption(what_ + ": the chunk at byte " + std::to_string(offset) + " ends past the piece's " +
                              std::to_string(size_) + " bytes");
  }
  bytes_.append(bytes);
  ++chunks_;
  return Status::Ok();
}

Result<std::string> PieceAssembly::Finish() {
  if (bytes_.size() != size_) {
    return Status::Corruption(what_ + ": " + std::to_string(bytes_.size()) + " of its " + std::to_string(size_) +
                              " bytes arrived (a chunk is missing)");
  }
  if (Digest64(bytes_) != digest_) {
    return Status::Corruption(what_ + ": checksum mismatch (XXH3 " + Hex64(Digest64(bytes_)) + ", announced " +
                              Hex64(digest_) + "): a chunk was damaged on the way; the piece is not kept");
  }
  return std::move(bytes_);
}

}  // namespace actorrec::trainer
