// Cap'n Proto messages carried by CAF: Frame<S> is what actors send, Open()
// is the only way to read one.
//
// A Frame<S> holds one flat Cap'n Proto message whose root is S (segment table
// followed by the segments). Sealing a built message copies it once into the
// frame; from there CAF shares the frame between in-process actors without
// copying, and across processes the middleman moves the bytes with one raw
// copy (CAF 0.17 serializes byte vectors with memcpy). The receiver reads in
// place when the bytes are 8-byte aligned, which operator new guarantees on
// the platforms we build for, and copies into aligned storage otherwise.
//
// Open() validates the whole message before anyone reads it: the segment
// table, that the frame holds exactly one message, every pointer's bounds, a
// traversal limit proportional to the message size (so a crafted message
// cannot make readers loop), and that every field the schema of S names reads
// as its declared type (a flipped pointer kind or list element size would
// otherwise throw from a getter later). Malformed or truncated bytes give a
// Corruption status naming the message kind; they never throw into the
// receiving actor. What Open() cannot judge is meaning: enum values and union
// members from a newer schema read as unknown, and numbers are whatever the
// sender wrote, so readers still check ranges where they use them.
//
// Thread-safety: frames are values; a View must stay on one thread.
#pragma once

#include <capnp/any.h>
#include <capnp/message.h>
#include <capnp/schema.h>
#include <capnp/serialize.h>
#include <caf/fwd.hpp>
#include <caf/meta/type_name.hpp>
#include <kj/exception.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/status.hpp"

namespace actorrec::wire {

// The name under which CAF knows Frame<S>; the same in every process.
// Specialized for every message kind in messages/kinds.hpp.
template <class S>
struct MessageName;

template <class S>
struct Frame {
  std::vector<char> bytes;
};

namespace detail {
// Reads a frame's bytes as CAF writes a byte vector (its length, then the
// bytes), refusing a length beyond the bytes left in the message before
// allocating. CAF 0.17 itself resizes to whatever length the sender
// announced, so one small message from a peer could make a receiver
// allocate up to 4 GiB (docs/cluster_security.md).
caf::error LoadFrameBytes(caf::deserializer& in, std::vector<char>& bytes);
}  // namespace detail

template <class Inspector, class S>
typename Inspector::result_type inspect(Inspector& f, Frame<S>& x) {
  if constexpr (!Inspector::reads_state) {  // loading: a deserializer
    return detail::LoadFrameBytes(f, x.bytes);
  } else {
    return f(caf::meta::type_name(MessageName<S>::value), x.bytes);
  }
}

// Flattens a finished message into a frame (the one copy on the send side).
template <class S>
Frame<S> Seal(capnp::MessageBuilder& builder) {
  Frame<S> frame;
  auto segments = builder.getSegmentsForOutput();
  frame.bytes.resize(capnp::computeSerializedSizeInWords(segments) * sizeof(capnp::word));
  kj::ArrayOutputStream out(
      kj::arrayPtr(reinterpret_cast<kj::byte*>(frame.bytes.data()), frame.bytes.size()));
  capnp::writeMessage(out, segments);
  return frame;
}

// Builds a message with `fill(S::Builder)` and seals it.
template <class S, class Fill>
Frame<S> Encode(Fill&& fill) {
  capnp::MallocMessageBuilder builder;
  fill(builder.initRoot<S>());
  return Seal<S>(builder);
}

// Words a reader may traverse per word of message. Reading every field once
// costs at most one word per word, because Open() refuses messages whose
// objects overlap; Open() spends two such passes (bounds, then schema types),
// which leaves the receiver six. The budget is per View and counts every
// getter call: a receiver that calls a list getter inside a loop over that
// list's elements spends the list once per call and will throw, so hoist it.
inline constexpr uint64_t kTraversalWordsPerWord = 8;
inline constexpr uint64_t kTraversalSlackWords = 1024;
// Structs nested deeper than this are refused (our schemas nest < 8 levels).
inline constexpr int kNestingLimit = 64;

// A validated, readable message. Movable; the root stays valid as long as the
// View lives (and the Frame it came from, when it was read in place).
template <class S>
class View {
 public:
  typename S::Reader root() const { return root_; }
  // True when Open() had to copy the bytes to align them (tests look at this).
  bool copied() const { return !aligned_.empty(); }

 private:
  template <class T>
  friend Result<View<T>> Open(const char* data, size_t size);

  std::vector<capnp::word> aligned_;
  std::unique_ptr<capnp::FlatArrayMessageReader> reader_;
  typename S::Reader root_;
};

namespace detail {

// Reads every field that `schema` declares, recursing into structs, groups,
// the union member that is set, and lists of anything that holds pointers.
// Throws kj::Exception where the bytes do not have the declared type.
void ReadEveryField(capnp::AnyStruct::Reader root, capnp::StructSchema schema);

}  // namespace detail

// Validates and opens `size` bytes at `data` as one message of root type S.
// The bytes must outlive the View when they are 8-byte aligned (read in
// place); otherwise they are copied. Open(frame) is the form actors use.
template <class S>
Result<View<S>> Open(const char* data, size_t size) {
  const char* kind = MessageName<S>::value;
  if (size == 0) {
    return Status::Corruption(std::string("empty ") + kind + " message");
  }
  if (size % sizeof(capnp::word) != 0) {
    return Status::Corruption(std::string("truncated ") + kind + " message: " +
                              std::to_string(size) + " bytes is not a whole number of words");
  }
  View<S> view;
  const size_t words = size / sizeof(capnp::word);
  const capnp::word* begin = reinterpret_cast<const capnp::word*>(data);
  if (reinterpret_cast<uintptr_t>(data) % alignof(capnp::word) != 0) {
    view.aligned_.resize(words);
    std::memcpy(view.aligned_.data(), data, size);
    begin = view.aligned_.data();
  }
  capnp::ReaderOptions options;
  options.traversalLimitInWords = words * kTraversalWordsPerWord + kTraversalSlackWords;
  options.nestingLimit = kNestingLimit;
  try {
    view.reader_ = std::make_unique<capnp::FlatArrayMessageReader>(kj::arrayPtr(begin, words), options);
    if (view.reader_->getEnd() != begin + words) {
      const size_t extra = static_cast<size_t>(begin + words - view.reader_->getEnd()) * sizeof(capnp::word);
      return Status::Corruption(std::string("malformed ") + kind + " message: " + std::to_string(extra) +
                                " bytes after the end of the message");
    }
    view.root_ = view.reader_->template getRoot<S>();
    // Walks every pointer once: out-of-bounds and overlong pointers surface
    // here, and pointers sharing targets to amplify work hit the traversal
    // limit. Objects a builder writes never overlap, so more reachable words
    // than the message holds means sharing: refused too, so that any full
    // pass over the message costs at most one word per word of budget.
    const uint64_t reachable = view.root_.totalSize().wordCount;
    if (reachable > words) {
      return Status::Corruption(std::string("malformed ") + kind + " message: pointers overlap (" +
                                std::to_string(reachable) + " words reachable in " + std::to_string(words) + ")");
    }
    // Reads every field as its schema types it: wrong-kind pointers and
    // incompatible list element sizes surface here rather than in the handler
    // that reads them.
    detail::ReadEveryField(view.reader_->template getRoot<capnp::AnyStruct>(), capnp::Schema::from<S>());
  } catch (const kj::Exception& e) {
    return Status::Corruption(std::string("malformed ") + kind + " message: " +
                              e.getDescription().cStr());
  }
  return view;
}

template <class S>
Result<View<S>> Open(const Frame<S>& frame) {
  return Open<S>(frame.bytes.data(), frame.bytes.size());
}

}  // namespace actorrec::wire
