// The config reference: every key the loader accepts, with its type (as the
// loader checks it), its default (read off a default-constructed Config) and
// its meaning, grouped by table. docs/config.md is this reference as
// Markdown (`actorrec config reference`), and a test keeps the two equal.
//
// The keys and their types come from the readers themselves (KeyRecording,
// toml_reader.hpp), run over a few documents that reach every branch, so a
// key added to a reader shows up here by itself; only its meaning is written
// by hand, in key_reference.cpp, and ReferenceProblems() says when a key has
// none (or a meaning names a key that no longer exists).
#pragma once

#include <string>
#include <vector>

namespace actorrec::config {

struct KeyReference {
  std::string table;  // "training", "dataset.generator", "cluster.member" ([[cluster.member]])
  std::string key;
  std::string type;
  std::string default_value;  // as TOML would write it, or a phrase ("runs/<run.name>")
  std::string meaning;
};

// In table order (as in configs/local.toml), keys in the readers' order.
std::vector<KeyReference> ConfigKeyReference();

// Accepted keys without a meaning, meanings of keys the loader does not
// accept, and keys no reader was seen to read; empty when the reference is
// complete.
std::vector<std::string> ReferenceProblems();

// docs/config.md.
std::string ConfigReferenceMarkdown();

}  // namespace actorrec::config
