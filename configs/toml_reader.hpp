// A validating reader over toml++ tables: typed getters that record every
// problem (file, line, dotted key, expected vs found) instead of throwing, and
// that remember which keys were read so that the rest can be reported as
// unknown.
//
// Usage: one ProblemList per file; one TableReader per TOML table. Every
// getter marks its key as used, returns std::nullopt when the key is absent or
// invalid (the problem is then already recorded), and never throws. After
// reading a table, call Finish() to report the keys nobody asked for.
//
// Not thread-safe; a reader borrows the toml::table and the ProblemList, which
// must outlive it.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "configs/config.hpp"

namespace actorrec::config {

// The problems of one file, in the order they were found.
class ProblemList {
 public:
  explicit ProblemList(std::string file) : file_(std::move(file)) {}

  void Add(int line, std::string key, std::string message);
  const std::string& file() const { return file_; }
  bool empty() const { return problems_.empty(); }
  size_t size() const { return problems_.size(); }
  // The problems ordered by line (stable: same-line problems keep their order).
  std::vector<Problem> Sorted() const;

 private:
  std::string file_;
  std::vector<Problem> problems_;
};

// Bounds of a floating-point key; infinities mean "no bound".
struct RealRange {
  double min = -std::numeric_limits<double>::infinity();
  bool min_open = false;  // true: min itself is excluded
  double max = std::numeric_limits<double>::infinity();
  bool max_open = false;
};

// What the readers ask for, recorded while a KeyRecording lives on this
// thread: every getter call (the key and the type it expects) and every
// table's list of known keys. The config reference (key_reference.hpp) is
// built from it, so that it lists exactly the keys the loader accepts.
struct RecordedKey {
  std::string table;  // dotted, array indices dropped: "cluster.member", "" for the root
  std::string key;
  std::string type;   // "an integer in [1, 1024]", …; empty for a known-keys entry
};

class KeyRecording {
 public:
  KeyRecording();
  ~KeyRecording();
  KeyRecording(const KeyRecording&) = delete;
  KeyRecording& operator=(const KeyRecording&) = delete;
  // The recording alive on this thread, or null.
  static KeyRecording* Current();

  const std::vector<RecordedKey>& asked() const { return asked_; }
  const std::vector<RecordedKey>& known() const { return known_; }

 private:
  friend class TableReader;
  KeyRecording* previous_;
  std::vector<RecordedKey> asked_, known_;
};

class TableReader {
 public:
  static constexpr int64_t kNoMax = std::numeric_limits<int64_t>::max();

  // `table` may be null: the table is absent and every key reads as missing.
  // `path` is the dotted name of the table ("model", "cluster.member[1]"; ""
  // for the document root).
  TableReader(const toml::table* table, std::string path, ProblemList* problems);

  bool present() const { return table_ != nullptr; }
  // Where problems go, for checks that span several tables.
  ProblemList* problems() const { return problems_; }
  const std::string& path() const { return path_; }
  // The table's own line (its [header]); 0 when absent.
  int line() const { return line_; }
  bool Has(std::string_view key) const;
  // The line of `key`'s value, or the table's line when the key is absent.
  int LineOf(std::string_view key) const;
  // "path.key" (just "key" at the root).
  std::string KeyPath(std::string_view key) const;

  // Records a problem about `key`, at its line.
  void Fail(std::string_view key, std::string message);
  // Records "missing" for a required `key` when it is absent; returns whether
  // it is present. `hint` says what to write.
  bool Require(std::string_view key, std::string_view hint);
  // A key that does not apply in this configuration (`why` says when it
  // does): a problem when present.
  void NotApplicable(std::string_view key, std::string_view why);

  // Typed getters; see the file comment.
  std::optional<int64_t> Int(std::string_view key, int64_t min, int64_t max = kNoMax);
  std::optional<double> Real(std::string_view key, const RealRange& range);
  // A non-empty string.
  std::optional<std::string> String(std::string_view key);
  // true or false.
  std::optional<bool> Bool(std::string_view key);
  // A non-empty array of non-empty strings, at most `max_size` of them.
  std::optional<std::vector<std::string>> StringArray(std::string_view key, size_t max_size = 4096);
  // A non-empty string, or an array of 1 to `max_size` of them.
  std::optional<std::vector<std::string>> StringOrArray(std::string_view key, size_t max_size = 4096);
  // A number in `range`, or a non-empty array of such numbers.
  std::optional<std::vector<double>> RealOrArray(std::string_view key, const RealRange& range, size_t max_size = 4096);
  // A string from `choices`; returns its index.
  std::optional<size_t> Choice(std::string_view key, std::span<const std::string_view> choices);
  // A non-empty array of integers each in [min, max], at most `max_size` long.
  std::optional<std::vector<int64_t>> IntArray(std::string_view key, int64_t min, int64_t max,
                                               size_t max_size = 65536);
  // A non-empty array of strings from `choices`; returns their indices.
  std::optional<std::vector<size_t>> ChoiceArray(std::string_view key,
                                                 std::span<const std::string_view> choices);
  // A sub-table; an absent reader when the key is missing or not a table.
  TableReader Table(std::string_view key);
  // An array of tables ([[key]]); empty when missing or malformed.
  std::vector<const toml::table*> TableArray(std::string_view key);

  // Reports every key that no getter asked for as unknown, suggesting the
  // closest of `known` when it is close enough to be a likely typo.
  void Finish(std::span<const std::string_view> known);

 private:
  // Marks `key` used and returns its node, or null when absent.
  const toml::node* Use(std::string_view key);
  // Records that `key` is read as `type` when a KeyRecording is alive.
  void Note(std::string_view key, const std::string& type) const;
  void Expected(std::string_view key, const toml::node& found, std::string_view expected,
                bool show_type);

  const toml::table* table_;
  std::string path_;
  ProblemList* problems_;
  int line_ = 0;
  std::set<std::string, std::less<>> used_;
};

// `text` in double quotes, with quotes and backslashes escaped and bytes that
// are not printable as \xNN (base/printable.hpp).
std::string Quote(std::string_view text);
// "a, b, c".
std::string JoinNames(std::span<const std::string_view> names);
// The entry of `candidates` closest to `word` by edit distance, or "" when
// none is close enough to be a plausible typo.
std::string_view ClosestMatch(std::string_view word, std::span<const std::string_view> candidates);

}  // namespace actorrec::config
