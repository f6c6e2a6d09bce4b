// Helpers for config tests: real files in a fresh temporary directory, the
// error text of loading them, and line numbers found by content so that the
// expected messages stay exact when a test file changes.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "configs/config.hpp"
#include "tests/support/temp_dir.hpp"

namespace actorrec::config::testing {

using TempDir = ::actorrec::testing::TempDir;

// The ConfigError of loading `path`; fails the test when the file loads.
inline ConfigError LoadFailure(const std::string& path) {
  try {
    LoadConfig(path);
  } catch (const ConfigError& e) {
    return e;
  }
  FAIL("expected a ConfigError from " << path);
  throw;  // unreachable: FAIL throws
}

inline std::string LoadError(const std::string& path) { return LoadFailure(path).what(); }

// The 1-based line of the first line of `text` that contains `needle`.
inline int LineOf(const std::string& text, const std::string& needle) {
  size_t at = text.find(needle);
  REQUIRE(at != std::string::npos);
  int line = 1;
  for (size_t i = 0; i < at; ++i) line += text[i] == '\n';
  return line;
}

// "<path>:<line of needle>: "; the start of a message about that line.
inline std::string At(const std::string& path, const std::string& text, const std::string& needle) {
  return path + ":" + std::to_string(LineOf(text, needle)) + ": ";
}

// `text` with the single occurrence of `from` replaced by `to`.
inline std::string Replace(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  REQUIRE(text.find(from, at + 1) == std::string::npos);
  return text.replace(at, from.size(), to);
}

// Everything but [cluster]: a small valid DLRM run.
inline const std::string kHead = R"([run]
name = "t"

[model]
kind = "dlrm"
embedding_dim = 16
bottom_mlp = [64, 16]
top_mlp = [64, 1]

[dataset]
samples = 4096

[training]
batch_size = 512
)";

// One process with every role.
inline const std::string kOneMember = R"(
[cluster]
secret = "0123456789abcdef-test"

[[cluster.member]]
name = "local"
address = "127.0.0.1"
roles = ["all"]
trainers = 2
)";

// Two processes: a hosts sampler, oracle and embedding; b trains.
inline const std::string kTwoMembers = R"(
[cluster]
secret = "0123456789abcdef-test"

[[cluster.member]]
name = "a"
address = "127.0.0.1"
port = 7701
roles = ["sampler", "oracle", "embedding"]

[[cluster.member]]
name = "b"
address = "127.0.0.1"
port = 7702
roles = ["trainer", "embedding"]
trainers = 2
)";

inline const std::string kValid = kHead + kOneMember;

}  // namespace actorrec::config::testing
