// Open() refuses malformed bytes with a Corruption status and never throws:
// truncation, trailing bytes, random bit flips, overlapping pointers, and
// misaligned buffers.
#include <capnp/dynamic.h>

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "messages/kinds.hpp"
#include "tests/messages/examples.hpp"

namespace actorrec::wire {
namespace {

// Reads every field of a message, primitive list elements and blob bytes
// included, the way the most thorough receiver would. Returns a checksum so
// that nothing is optimized away.
uint64_t ReadAll(const capnp::DynamicValue::Reader& value);

uint64_t ReadStruct(capnp::DynamicStruct::Reader s) {
  uint64_t sum = 0;
  for (auto field : s.getSchema().getNonUnionFields()) sum += ReadAll(s.get(field));
  KJ_IF_MAYBE(member, s.which()) { sum += ReadAll(s.get(*member)); }
  return sum;
}

uint64_t ReadAll(const capnp::DynamicValue::Reader& value) {
  switch (value.getType()) {
    case capnp::DynamicValue::STRUCT:
      return ReadStruct(value.as<capnp::DynamicStruct>());
    case capnp::DynamicValue::LIST: {
      uint64_t sum = 0;
      for (auto element : value.as<capnp::DynamicList>()) sum += ReadAll(element);
      return sum;
    }
    case capnp::DynamicValue::TEXT: {
      uint64_t sum = 0;
      for (char c : value.as<capnp::Text>()) sum += static_cast<unsigned char>(c);
      return sum;
    }
    case capnp::DynamicValue::DATA: {
      uint64_t sum = 0;
      for (kj::byte b : value.as<capnp::Data>()) sum += b;
      return sum;
    }
    case capnp::DynamicValue::INT:
      return static_cast<uint64_t>(value.as<int64_t>());
    case capnp::DynamicValue::UINT:
      return value.as<uint64_t>();
    case capnp::DynamicValue::FLOAT:
      return static_cast<uint64_t>(value.as<double>() != 0.0);
    case capnp::DynamicValue::BOOL:
      return value.as<bool>() ? 1 : 0;
    case capnp::DynamicValue::ENUM:
      return value.as<capnp::DynamicEnum>().getRaw();
    default:
      return 0;
  }
}

// One example message, type-erased: `open` runs Open<S> on raw bytes and, if
// that succeeds, reads every field of the result.
struct Sample {
  std::string kind;
  std::vector<char> bytes;
  std::function<Status(const char*, size_t)> open;
};

template <class S>
Sample MakeSample(Frame<S> frame) {
  return {MessageName<S>::value, std::move(frame.bytes), [](const char* data, size_t size) -> Status {
            auto view = Open<S>(data, size);
            if (view.ok()) (void)ReadAll(capnp::toDynamic(view->root()));
            return view.status();
          }};
}

// Realistic messages of several kinds: nested lists, unions, text, data, and
// one large enough (~40 KiB of rows) to span several segments.
std::vector<Sample> Samples() {
  std::vector<Sample> out;
  out.push_back(MakeSample(testing::MakeBatchKjt()));
  out.push_back(MakeSample(testing::MakeBatchIkjt()));
  out.push_back(MakeSample(testing::MakePlan()));
  out.push_back(MakeSample(testing::MakeRows(5)));
  out.push_back(MakeSample(testing::MakeRowFetch(40)));
  out.push_back(MakeSample(testing::MakeStats()));
  out.push_back(MakeSample(testing::MakeHeartbeat()));
  return out;
}

uint32_t SegmentCount(const std::vector<char>& bytes) {
  uint32_t first;
  std::memcpy(&first, bytes.data(), sizeof(first));
  return first + 1;
}

TEST_CASE("every example message opens cleanly, the multi-segment one included", "[messages]") {
  for (const auto& sample : Samples()) {
    INFO(sample.kind);
    REQUIRE(sample.open(sample.bytes.data(), sample.bytes.size()).ok());
  }
  auto big = testing::MakeRows(320);
  REQUIRE(SegmentCount(big.bytes) >= 2);
  REQUIRE(Open(big).ok());
}

TEST_CASE("every truncation of a message is refused as corruption", "[messages]") {
  auto samples = Samples();
  samples.push_back(MakeSample(testing::MakeRows(320)));  // several segments
  for (const auto& sample : samples) {
    INFO(sample.kind << ", " << sample.bytes.size() << " bytes");
    for (size_t size = 0; size < sample.bytes.size(); ++size) {
      INFO("truncated to " << size << " bytes");
      Status status;
      REQUIRE_NOTHROW(status = sample.open(sample.bytes.data(), size));
      REQUIRE(status.code() == Status::Code::kCorruption);
      REQUIRE(status.message().find(sample.kind) != std::string::npos);
    }
  }
}

TEST_CASE("a frame with bytes after the end of its message is refused", "[messages]") {
  auto frame = testing::MakeHeartbeat();
  frame.bytes.resize(frame.bytes.size() + 16, '\0');
  auto view = Open(frame);
  REQUIRE_FALSE(view.ok());
  REQUIRE(view.status().code() == Status::Code::kCorruption);
  REQUIRE(view.status().message() == "malformed actorrec.Heartbeat message: 16 bytes after the end of the message");
}

TEST_CASE("empty and odd-sized frames are refused before capnp sees them", "[messages]") {
  Frame<Rows> empty;
  REQUIRE(Open(empty).status().message() == "empty actorrec.Rows message");
  Frame<Rows> odd;
  odd.bytes.assign(13, '\0');
  REQUIRE(Open(odd).status().message() ==
          "truncated actorrec.Rows message: 13 bytes is not a whole number of words");
}

TEST_CASE("a segment table that claims more than the frame holds is refused", "[messages]") {
  auto frame = testing::MakeHeartbeat();
  SECTION("too many segments") {
    const uint32_t segments_minus_one = 0x7fffffff;
    std::memcpy(frame.bytes.data(), &segments_minus_one, sizeof(segments_minus_one));
  }
  SECTION("a first segment longer than the frame") {
    const uint32_t words = 0xffffffff;
    std::memcpy(frame.bytes.data() + 4, &words, sizeof(words));
  }
  auto view = Open(frame);
  REQUIRE_FALSE(view.ok());
  REQUIRE(view.status().code() == Status::Code::kCorruption);
}

// Random damage of the kinds a bad link, a bad disk or a hostile peer cause.
void Mutate(std::vector<char>& bytes, std::mt19937_64& rng) {
  const size_t words = bytes.size() / 8;
  std::uniform_int_distribution<size_t> any_byte(0, bytes.size() - 1);
  std::uniform_int_distribution<size_t> any_word(0, words - 1);
  switch (rng() % 4) {
    case 0: {  // a few flipped bits anywhere
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int i = 0; i < flips; ++i) bytes[any_byte(rng)] ^= static_cast<char>(1u << (rng() % 8));
      break;
    }
    case 1: {  // a word of garbage
      const uint64_t garbage = rng();
      std::memcpy(bytes.data() + 8 * any_word(rng), &garbage, 8);
      break;
    }
    case 2: {  // a plausible pointer: any kind, a small offset, any size
      const uint64_t kind = rng() % 4;
      const int32_t offset = static_cast<int32_t>(rng() % 64) - 32;
      const uint64_t upper = rng() % 4 == 0 ? rng() >> 32 : (rng() % 8) | ((rng() % 64) << 3);
      const uint64_t pointer = kind | (static_cast<uint64_t>(static_cast<uint32_t>(offset) << 2)) | (upper << 32);
      std::memcpy(bytes.data() + 8 * any_word(rng), &pointer, 8);
      break;
    }
    default: {  // the segment table
      bytes[rng() % std::min<size_t>(16, bytes.size())] ^= static_cast<char>(1u << (rng() % 8));
      break;
    }
  }
}

TEST_CASE("randomly corrupted messages open or fail cleanly and never throw", "[messages]") {
  const uint64_t seed = GENERATE(take(200, random(uint64_t{0}, ~uint64_t{0})));
  std::mt19937_64 rng(seed);
  for (const auto& sample : Samples()) {
    for (int round = 0; round < 4; ++round) {
      auto bytes = sample.bytes;
      Mutate(bytes, rng);
      INFO(sample.kind << ", seed " << seed << ", round " << round);
      Status status;
      // An accepted message must also be readable to the last field.
      REQUIRE_NOTHROW(status = sample.open(bytes.data(), bytes.size()));
      REQUIRE((status.ok() || status.code() == Status::Code::kCorruption));
    }
  }
}

// A batch with `tables` KJT tables whose values lists all point at table 0's
// list of `values` row ids: a few hundred words that read as tables × values.
std::vector<char> AliasedBatch(uint32_t tables, uint32_t values) {
  auto frame = Encode<Batch>([&](Batch::Builder b) {
    b.setSamples(1);
    auto kjt = b.getSparse().initKjt(tables);
    for (uint32_t t = 0; t < tables; ++t) {
      kjt[t].setTable(t);
      auto v = kjt[t].initValues(t == 0 ? values : 0);
      for (uint32_t i = 0; i < v.size(); ++i) v.set(i, i);
    }
  });
  auto view = Open(frame);
  REQUIRE(view.ok());
  auto kjt = view->root().getSparse().getKjt();
  // A struct's pointer section follows its data section; `values` is pointer 0.
  auto values_pointer = [&](uint32_t t) {
    auto data = capnp::AnyStruct::Reader(kjt[t]).getDataSection();
    return static_cast<size_t>(reinterpret_cast<const char*>(data.end()) - frame.bytes.data());
  };
  std::vector<char> bytes = frame.bytes;
  const size_t at0 = values_pointer(0);
  uint64_t pointer0;
  std::memcpy(&pointer0, bytes.data() + at0, 8);
  REQUIRE((pointer0 & 3) == 1);  // a list pointer
  const int64_t target = static_cast<int64_t>(at0 / 8) + 1 + (static_cast<int32_t>(pointer0 & 0xffffffff) >> 2);
  for (uint32_t t = 1; t < tables; ++t) {
    const size_t at = values_pointer(t);
    const int32_t offset = static_cast<int32_t>(target - static_cast<int64_t>(at / 8) - 1);
    const uint64_t pointer = (pointer0 & ~uint64_t{0xffffffff}) | (static_cast<uint32_t>(offset) << 2) | 1u;
    std::memcpy(bytes.data() + at, &pointer, 8);
  }
  return bytes;
}

TEST_CASE("a message whose pointers share one large list is refused", "[messages]") {
  SECTION("64 tables reading one 512-entry list exceed the traversal limit") {
    auto bytes = AliasedBatch(64, 512);
    // Sanity: the crafted tables really read as that list.
    capnp::FlatArrayMessageReader reader(
        kj::arrayPtr(reinterpret_cast<const capnp::word*>(bytes.data()), bytes.size() / 8));
    auto kjt = reader.getRoot<Batch>().getSparse().getKjt();
    REQUIRE(kjt[63].getValues().size() == 512);
    REQUIRE(kjt[63].getValues()[511] == 511);
    auto view = Open<Batch>(bytes.data(), bytes.size());
    REQUIRE_FALSE(view.ok());
    REQUIRE(view.status().code() == Status::Code::kCorruption);
    REQUIRE(view.status().message().find("traversal limit") != std::string::npos);
  }
  SECTION("even two tables sharing a list are refused as overlapping") {
    auto bytes = AliasedBatch(2, 512);
    auto view = Open<Batch>(bytes.data(), bytes.size());
    REQUIRE_FALSE(view.ok());
    REQUIRE(view.status().code() == Status::Code::kCorruption);
    REQUIRE(view.status().message().find("overlap") != std::string::npos);
  }
  SECTION("the same message without sharing opens") {
    auto frame = Encode<Batch>([](Batch::Builder b) {
      auto kjt = b.getSparse().initKjt(64);
      kjt[0].initValues(512);
    });
    REQUIRE(Open(frame).ok());
  }
}

TEST_CASE("a frame at an odd address is copied to aligned storage and reads the same", "[messages]") {
  auto frame = testing::MakeRows(5, 16, 16);
  const size_t shift = GENERATE(1u, 3u, 4u, 7u);
  // new[] storage is 16-byte aligned, so data + shift is misaligned for words.
  std::vector<char> buffer(frame.bytes.size() + 8);
  std::memcpy(buffer.data() + shift, frame.bytes.data(), frame.bytes.size());
  REQUIRE(reinterpret_cast<uintptr_t>(buffer.data() + shift) % 8 != 0);
  auto view = Open<Rows>(buffer.data() + shift, frame.bytes.size());
  REQUIRE(view.ok());
  REQUIRE(view->copied());
  // The view no longer depends on the buffer.
  std::fill(buffer.begin(), buffer.end(), '\xff');
  auto r = view->root();
  REQUIRE(r.getRequestId() == 77);
  REQUIRE(r.getKeys().size() == 5);
  REQUIRE(r.getKeys()[4].getRow() == testing::ExampleRow(4));
  float first;
  std::memcpy(&first, r.getData().begin(), sizeof(first));
  REQUIRE(first == testing::RowValue(0, 0));
  REQUIRE(reinterpret_cast<uintptr_t>(r.getData().begin()) % 8 == 0);

  auto aligned = Open(frame);
  REQUIRE(aligned.ok());
  REQUIRE_FALSE(aligned->copied());
  REQUIRE(reinterpret_cast<const char*>(aligned->root().getData().begin()) > frame.bytes.data());
  REQUIRE(reinterpret_cast<const char*>(aligned->root().getData().end()) <= frame.bytes.data() + frame.bytes.size());
}

TEST_CASE("a field whose pointer has the wrong kind is refused by Open, not by its getter", "[messages]") {
  auto frame = testing::MakeHeartbeat();
  // Heartbeat: segment table (1 word), root pointer, 3 data words, then the
  // `member` text pointer. Turn it into a struct pointer with no body.
  const size_t member_pointer = 8 * (1 + 1 + 3);
  uint64_t before;
  std::memcpy(&before, frame.bytes.data() + member_pointer, 8);
  REQUIRE((before & 3) == 1);  // it was a list pointer (Text)
  // Kind 0 (struct), offset 0, one data word: the text's own word, in bounds.
  const uint64_t struct_pointer = uint64_t{1} << 32;
  std::memcpy(frame.bytes.data() + member_pointer, &struct_pointer, 8);
  // capnp itself would throw from getMember() here.
  capnp::FlatArrayMessageReader reader(
      kj::arrayPtr(reinterpret_cast<const capnp::word*>(frame.bytes.data()), frame.bytes.size() / 8));
  REQUIRE_THROWS_AS(reader.getRoot<Heartbeat>().getMember(), kj::Exception);
  auto view = Open(frame);
  REQUIRE_FALSE(view.ok());
  REQUIRE(view.status().code() == Status::Code::kCorruption);
  REQUIRE(view.status().message().find("actorrec.Heartbeat") != std::string::npos);
}

}  // namespace
}  // namespace actorrec::wire
