// The BASP frame bound against headers written by CAF's own serializer.
#include "base/frame_bound.hpp"

#include <caf/all.hpp>
#include <caf/io/basp/header.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace actorrec {
namespace {

std::vector<char> Header(caf::actor_system& sys, uint32_t payload_len) {
  caf::io::basp::header hdr{caf::io::basp::message_type::direct_message, 0, payload_len, 7, 11, 13};
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  REQUIRE_FALSE(sink(hdr));
  return buf;
}

TEST_CASE("the frame bound reads CAF's BASP header layout and passes payloads within the limit",
          "[base][frame_bound]") {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  REQUIRE(caf::io::basp::header_size == FrameBound::kHeaderBytes);
  FrameBound bound(1000);
  // Three frames, fed one byte at a time: the split never matters.
  std::vector<char> stream;
  for (uint32_t len : {0u, 1000u, 17u}) {
    auto h = Header(sys, len);
    REQUIRE(h.size() == FrameBound::kHeaderBytes);
    stream.insert(stream.end(), h.begin(), h.end());
    stream.insert(stream.end(), len, 'p');
  }
  for (char c : stream) REQUIRE_FALSE(bound.Feed(&c, 1));
  REQUIRE(bound.frames() == 3);
  REQUIRE(bound.largest() == 1000);
}

TEST_CASE("a header announcing more than the limit is refused when its last byte arrives", "[base][frame_bound]") {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  FrameBound bound(uint64_t{1} << 30);
  auto ok = Header(sys, 8);
  REQUIRE_FALSE(bound.Feed(ok.data(), ok.size()));
  REQUIRE_FALSE(bound.Feed("12345678", 8));
  auto forged = Header(sys, 0x80000000u);  // 2 GiB
  REQUIRE_FALSE(bound.Feed(forged.data(), forged.size() - 1));
  auto why = bound.Feed(forged.data() + forged.size() - 1, 1);
  REQUIRE(why);
  REQUIRE_THAT(*why, Catch::Contains("2147483648 bytes announced") && Catch::Contains("1073741824"));
}

}  // namespace
}  // namespace actorrec
