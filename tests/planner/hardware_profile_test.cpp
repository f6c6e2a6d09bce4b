// Hardware profiles: read from TOML in SI-prefixed units, written back to
// the same values, and every bad file an error naming file, line and key.
#include <catch2/catch.hpp>

#include "planner/hardware_profile.hpp"

using namespace actorrec::planner;

namespace {

constexpr const char* kGood = R"([hardware]
name = "two hosts"
gemm_gflops = 100
memory_gbps = 20
network_gbit = 8
network_latency_us = 50
host_device_gbps = 0
trainer_memory_gib = 2
shard_memory_gib = 4
)";

}  // namespace

TEST_CASE("a hardware profile reads its rates in SI units", "[planner]") {
  auto p = ParseProfile(kGood, "hw.toml");
  REQUIRE(p.ok());
  CHECK(p->name == "two hosts");
  CHECK(p->gemm_flops == Approx(100e9));
  CHECK(p->memory_bw == Approx(20e9));
  CHECK(p->network_bw == Approx(1e9));  // 8 Gbit/s = 1 GB/s
  CHECK(p->network_latency == Approx(50e-6));
  CHECK(p->host_device_bw == 0);
  CHECK(p->trainer_memory == Approx(2.0 * 1024 * 1024 * 1024));
  CHECK(p->shard_memory == Approx(4.0 * 1024 * 1024 * 1024));
  CHECK(p->host_cores == 0);  // optional: not known
}

TEST_CASE("a hardware profile may give its host's cores", "[planner]") {
  auto p = ParseProfile(std::string(kGood) + "host_cores = 2\n", "hw.toml");
  REQUIRE(p.ok());
  CHECK(p->host_cores == 2);
  auto again = ParseProfile(ProfileToToml(*p, ""), "again.toml");
  REQUIRE(again.ok());
  CHECK(again->host_cores == 2);
  auto bad = ParseProfile(std::string(kGood) + "host_cores = -2\n", "hw.toml");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("hw.toml:10") && Catch::Contains("hardware.host_cores"));
}

TEST_CASE("a hardware profile may carry a calibration, read back and range-checked", "[planner]") {
  auto p = ParseProfile(std::string(kGood) + "trainer_gflops = 21.5\ntrainer_spread = 0.25\n", "hw.toml");
  REQUIRE(p.ok());
  CHECK(p->trainer_flops == Approx(21.5e9));
  CHECK(p->trainer_spread == Approx(0.25));
  auto again = ParseProfile(ProfileToToml(*p, ""), "again.toml");
  REQUIRE(again.ok());
  CHECK(again->trainer_flops == Approx(21.5e9));
  CHECK(again->trainer_spread == Approx(0.25));
  auto plain = ParseProfile(kGood, "hw.toml");  // optional: absent, none
  REQUIRE(plain.ok());
  CHECK(plain->trainer_flops == 0);
  CHECK(plain->trainer_spread == 0);
  auto bad = ParseProfile(std::string(kGood) + "trainer_spread = -1\n", "hw.toml");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("hw.toml:10") && Catch::Contains("hardware.trainer_spread"));
}

TEST_CASE("a hardware profile may give a row's processor time in the shards, read back and range-checked",
          "[planner]") {
  auto p = ParseProfile(std::string(kGood) + "shard_row_us = 1.5\n", "hw.toml");
  REQUIRE(p.ok());
  CHECK(p->shard_row == Approx(1.5e-6));
  auto again = ParseProfile(ProfileToToml(*p, ""), "again.toml");
  REQUIRE(again.ok());
  CHECK(again->shard_row == Approx(1.5e-6));
  auto plain = ParseProfile(kGood, "hw.toml");  // optional: absent, not counted
  REQUIRE(plain.ok());
  CHECK(plain->shard_row == 0);
  for (const char* value : {"-0.5", "2e6", "\"fast\"", "nan"}) {
    auto bad = ParseProfile(std::string(kGood) + "shard_row_us = " + value + "\n", "hw.toml");
    REQUIRE_FALSE(bad.ok());
    CHECK_THAT(bad.status().message(), Catch::Contains("hw.toml:10") && Catch::Contains("hardware.shard_row_us"));
  }
}

TEST_CASE("a hardware profile written as TOML reads back to the same values", "[planner]") {
  auto p = ParseProfile(kGood, "hw.toml");
  REQUIRE(p.ok());
  auto again = ParseProfile(ProfileToToml(*p, "measured by a test\non two lines"), "again.toml");
  REQUIRE(again.ok());
  CHECK(again->name == p->name);
  CHECK(again->gemm_flops == Approx(p->gemm_flops));
  CHECK(again->network_bw == Approx(p->network_bw));
  CHECK(again->network_latency == Approx(p->network_latency));
  CHECK(again->shard_memory == Approx(p->shard_memory));
}

TEST_CASE("a bad hardware profile is an error naming the file, line and key", "[planner]") {
  SECTION("a missing key") {
    std::string text = kGood;
    text.erase(text.find("network_gbit"), std::string("network_gbit = 8\n").size());
    auto p = ParseProfile(text, "hw.toml");
    REQUIRE_FALSE(p.ok());
    CHECK_THAT(p.status().message(), Catch::Contains("hw.toml") && Catch::Contains("hardware.network_gbit"));
  }
  SECTION("a value out of range") {
    std::string text = kGood;
    text.replace(text.find("gemm_gflops = 100"), 17, "gemm_gflops = -1");
    auto p = ParseProfile(text, "hw.toml");
    REQUIRE_FALSE(p.ok());
    CHECK_THAT(p.status().message(), Catch::Contains("hw.toml:3") && Catch::Contains("hardware.gemm_gflops"));
  }
  SECTION("an unknown key") {
    auto p = ParseProfile(std::string(kGood) + "netwrk_gbit = 1\n", "hw.toml");
    REQUIRE_FALSE(p.ok());
    CHECK_THAT(p.status().message(), Catch::Contains("hw.toml:10") && Catch::Contains("netwrk_gbit"));
  }
  SECTION("no [hardware] table") {
    auto p = ParseProfile("gemm_gflops = 1\n", "hw.toml");
    REQUIRE_FALSE(p.ok());
    CHECK_THAT(p.status().message(), Catch::Contains("hardware"));
  }
  SECTION("not TOML") {
    auto p = ParseProfile("[hardware\n", "hw.toml");
    REQUIRE_FALSE(p.ok());
    CHECK_THAT(p.status().message(), Catch::Contains("hw.toml:1"));
  }
  SECTION("no file") {
    auto p = LoadProfile("/nonexistent/hw.toml");
    REQUIRE_FALSE(p.ok());
    CHECK_THAT(p.status().message(), Catch::Contains("/nonexistent/hw.toml"));
  }
}
