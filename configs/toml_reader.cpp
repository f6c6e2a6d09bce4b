// Validating reader over toml++ tables; see toml_reader.hpp.
#include "configs/toml_reader.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "base/printable.hpp"

namespace actorrec::config {

namespace {

int LineOfNode(const toml::node& node) { return static_cast<int>(node.source().begin.line); }

std::string FormatDouble(double x) {
  // toml++ prints doubles the way TOML writes them ("16.0", "1e-08").
  std::ostringstream out;
  out << toml::value<double>(x);
  return out.str();
}

// The found value for a message: `"x" (a string)`, `2000`, `an array`...
// `show_type` adds the type to scalars; it matters when the type is wrong.
std::string Describe(const toml::node& node, bool show_type) {
  auto with_type = [show_type](std::string text, const char* type) {
    return show_type ? text + " (" + type + ")" : text;
  };
  if (auto s = node.as_string()) return with_type(Quote(s->get()), "a string");
  if (auto i = node.as_integer()) return with_type(std::to_string(i->get()), "an integer");
  if (auto f = node.as_floating_point()) {
    return with_type(FormatDouble(f->get()), "a floating-point number");
  }
  if (auto b = node.as_boolean()) return with_type(b->get() ? "true" : "false", "a boolean");
  if (node.is_array()) return "an array";
  if (node.is_table()) return "a table";
  if (node.is_date()) return "a date";
  if (node.is_time()) return "a time";
  return "a date-time";
}

std::string DescribeIntRange(int64_t min, int64_t max) {
  if (max == TableReader::kNoMax) return ">= " + std::to_string(min);
  return "in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
}

std::string DescribeRealRange(const RealRange& r) {
  bool has_min = std::isfinite(r.min), has_max = std::isfinite(r.max);
  if (has_min && has_max) {
    return std::string("in ") + (r.min_open ? "(" : "[") + FormatDouble(r.min) + ", " +
           FormatDouble(r.max) + (r.max_open ? ")" : "]");
  }
  if (has_min) return (r.min_open ? "> " : ">= ") + FormatDouble(r.min);
  if (has_max) return (r.max_open ? "< " : "<= ") + FormatDouble(r.max);
  return "";
}

bool InRange(double x, const RealRange& r) {
  if (r.min_open ? !(x > r.min) : !(x >= r.min)) return false;
  if (r.max_open ? !(x < r.max) : !(x <= r.max)) return false;
  return true;
}

// Optimal string alignment distance, case-insensitive: a swapped pair of
// letters is one typo, as is a wrong, missing or extra letter.
size_t EditDistance(std::string_view a, std::string_view b) {
  auto lower = [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
          lower(a[i - 2]) == lower(b[j - 1])) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

// ---------------------------------------------------------------- helpers

std::string Quote(std::string_view text) { return "\"" + Printable(text, '"') + "\""; }

std::string JoinNames(std::span<const std::string_view> names) {
  std::string out;
  for (std::string_view n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

std::string_view ClosestMatch(std::string_view word, std::span<const std::string_view> candidates) {
  std::string_view best;
  size_t best_distance = SIZE_MAX;
  for (std::string_view c : candidates) {
    size_t d = EditDistance(word, c);
    if (d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  // About one typo per four letters: "embeding_dim" finds embedding_dim, but
  // "seed" does not suggest "name".
  if (best.empty() || best_distance > std::max<size_t>(1, best.size() / 4)) return {};
  return best;
}

// ---------------------------------------------------------------- ProblemList

void ProblemList::Add(int line, std::string key, std::string message) {
  problems_.push_back(Problem{file_, line, std::move(key), std::move(message)});
}

std::vector<Problem> ProblemList::Sorted() const {
  std::vector<Problem> sorted = problems_;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Problem& a, const Problem& b) { return a.line < b.line; });
  return sorted;
}

// ---------------------------------------------------------------- TableReader

TableReader::TableReader(const toml::table* table, std::string path, ProblemList* problems)
    : table_(table), path_(std::move(path)), problems_(problems) {
  if (table_ != nullptr) line_ = LineOfNode(*table_);
}

namespace {
thread_local KeyRecording* g_recording = nullptr;

// "cluster.member[2]" -> "cluster.member".
std::string TablePattern(std::string_view path) {
  std::string out;
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '[') {
      while (i < path.size() && path[i] != ']') ++i;
      continue;
    }
    out += path[i];
  }
  return out;
}
}  // namespace

KeyRecording::KeyRecording() : previous_(g_recording) { g_recording = this; }
KeyRecording::~KeyRecording() { g_recording = previous_; }
KeyRecording* KeyRecording::Current() { return g_recording; }

void TableReader::Note(std::string_view key, const std::string& type) const {
  if (g_recording != nullptr) g_recording->asked_.push_back({TablePattern(path_), std::string(key), type});
}

bool TableReader::Has(std::string_view key) const {
  return table_ != nullptr && table_->get(key) != nullptr;
}

int TableReader::LineOf(std::string_view key) const {
  const toml::node* node = table_ == nullptr ? nullptr : table_->get(key);
  int line = node == nullptr ? 0 : LineOfNode(*node);
  return line > 0 ? line : line_;
}

std::string TableReader::KeyPath(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

void TableReader::Fail(std::string_view key, std::string message) {
  problems_->Add(LineOf(key), KeyPath(key), std::move(message));
}

bool TableReader::Require(std::string_view key, std::string_view hint) {
  if (Has(key)) return true;
  std::string where = path_.empty() ? "" : " under [" + path_ + "]";
  problems_->Add(line_, KeyPath(key), "missing; " + std::string(hint) + where);
  return false;
}

void TableReader::NotApplicable(std::string_view key, std::string_view why) {
  if (Use(key) != nullptr) Fail(key, std::string(why) + "; remove it");
}

const toml::node* TableReader::Use(std::string_view key) {
  if (table_ == nullptr) return nullptr;
  const toml::node* node = table_->get(key);
  if (node != nullptr) used_.emplace(key);
  return node;
}

void TableReader::Expected(std::string_view key, const toml::node& found,
                           std::string_view expected, bool show_type) {
  Fail(key, "expected " + std::string(expected) + "; got " + Describe(found, show_type));
}

std::optional<int64_t> TableReader::Int(std::string_view key, int64_t min, int64_t max) {
  std::string expected = "an integer " + DescribeIntRange(min, max);
  Note(key, expected);
  const toml::node* node = Use(key);
  if (node == nullptr) return std::nullopt;
  auto value = node->as_integer();
  if (value == nullptr) {
    Expected(key, *node, expected, /*show_type=*/true);
    return std::nullopt;
  }
  if (value->get() < min || value->get() > max) {
    Expected(key, *node, expected, /*show_type=*/false);
    return std::nullopt;
  }
  return value->get();
}

std::optional<double> TableReader::Real(std::string_view key, const RealRange& range) {
  std::string expected = "a finite number";
  if (std::string bounds = DescribeRealRange(range); !bounds.empty()) expected += " " + bounds;
  Note(key, expected);
  const toml::node* node = Use(key);
  if (node == nullptr) return std::nullopt;
  // An integer is a fine number: "row_scale = 1" means 1.0.
  double x;
  if (auto i = node->as_integer()) {
    x = static_cast<double>(i->get());
  } else if (auto f = node->as_floating_point()) {
    x = f->get();
  } else {
    Expected(key, *node, expected, /*show_type=*/true);
    return std::nullopt;
  }
  if (!std::isfinite(x) || !InRange(x, range)) {
    Expected(key, *node, expected, /*show_type=*/false);
    return std::nullopt;
  }
  return x;
}

std::optional<std::string> TableReader::String(std::string_view key) {
  Note(key, "a non-empty string");
  const toml::node* node = Use(key);
  if (node == nullptr) return std::nullopt;
  auto value = node->as_string();
  if (value == nullptr) {
    Expected(key, *node, "a string", /*show_type=*/true);
    return std::nullopt;
  }
  if (value->get().empty()) {
    Fail(key, "expected a non-empty string; got \"\" (leave the key out for the default)");
    return std::nullopt;
  }
  return value->get();
}

std::optional<bool> TableReader::Bool(std::string_view key) {
  Note(key, "true or false");
  const toml::node* node = Use(key);
  if (node == nullptr) return std::nullopt;
  auto value = node->as_boolean();
  if (value == nullptr) {
    Expected(key, *node, "true or false", /*show_type=*/true);
    return std::nullopt;
  }
  return value->get();
}

std::optional<std::vector<std::string>> TableReader::StringArray(std::string_view key, size_t max_size) {
  Note(key, "an array of 1 to " + std::to_string(max_size) + " non-empty strings");
  const toml::node* node = Use(key);
  if (node == nullptr) return std::nullopt;
  auto array = node->as_array();
  if (array == nullptr || array->empty() || array->size() > max_size) {
    Fail(key, "expected an array of 1 to " + std::to_string(max_size) + " strings; got " +
                  (array == nullptr ? Describe(*node, true) : std::to_string(array->size()) + " elements"));
    return std::nullopt;
  }
  std::vector<std::string> out;
  bool ok = true;
  for (size_t i = 0; i < array->size(); ++i) {
    const toml::node& item = *array->get(i);
    auto value = item.as_string();
    if (value == nullptr || value->get().empty()) {
      int line = LineOfNode(item) > 0 ? LineOfNode(item) : LineOf(key);
      problems_->Add(line, KeyPath(key) + "[" + std::to_string(i) + "]",
                     "expected a non-empty string; got " + Describe(item, value == nullptr));
      ok = false;
      continue;
    }
    out.push_back(value->get());
  }
  if (!ok) return std::nullopt;
  return out;
}

std::optional<std::vector<std::string>> TableReader::StringOrArray(std::string_view key, size_t max_size) {
  Note(key, "a non-empty string or an array of 1 to " + std::to_string(max_size) + " of them");
  const toml::node* node = table_ == nullptr ? nullptr : table_->get(key);
  if (node == nullptr || node->as_array() == nullptr) {
    auto one = String(key);
    if (!one) return std::nullopt;
    return std::vector<std::string>{*one};
  }
  return StringArray(key, max_size);
}

std::optional<std::vector<double>> TableReader::RealOrArray(std::string_view key, const RealRange& range,
                                                            size_t max_size) {
  Note(key, "a number or an array of 1 to " + std::to_string(max_size) + " numbers, each " + DescribeRealRange(range));
  const toml::node* node = Use(key);
  if (node == nullptr) return std::nullopt;
  if (node->as_array() == nullptr) {
    auto one = Real(key, range);
    if (!one) return std::nullopt;
    return std::vector<double>{*one};
  }
  auto array = node->as_array();
  if (array->empty() || array->size() > max_size) {
    Fail(key, "expected a number or an array of 1 to " + std::to_string(max_size) + " numbers; got " +
                  std::to_string(array->size()) + " elements");
    return std::nullopt;
  }
  std::vector<double> out;
  bool ok = true;
  for (size_t i = 0; i < array->size(); ++i) {
    const toml::node& item = *array->get(i);
    std::optional<double> v;
    if (auto f = item.as_floating_point()) v = f->get();
    if (auto n = item.as_integer()) v = static_cast<double>(n->get());
    if (!v || !InRange(*v, range)) {
      int line = LineOfNode(item) > 0 ? LineOfNode(item) : LineOf(key);
      problems_->Add(line, KeyPath(key) + "[" + std::to_string(i) + "]",
                     "expected a number " + DescribeRealRange(range) + "; got " + Describe(item, !v.has_value()));
      ok = false;
      continue;
    }
    out.push_back(*v);
  }
  if (!ok) return std::nullopt;
  return out;
}

std::optional<size_t> TableReader::Choice(std::string_view key,
                                          std::span<const std::string_view> choices) {
  std::string expected = "one of " + JoinNames(choices);
  Note(key, expected);
  const toml::node* node = Use(key);
  if (node == nullptr) return std::nullopt;
  auto value = node->as_string();
  if (value == nullptr) {
    Expected(key, *node, expected, /*show_type=*/true);
    return std::nullopt;
  }
  auto it = std::find(choices.begin(), choices.end(), std::string_view(value->get()));
  if (it != choices.end()) return static_cast<size_t>(it - choices.begin());
  std::string message = "expected " + expected + "; got " + Quote(value->get());
  if (auto guess = ClosestMatch(value->get(), choices); !guess.empty()) {
    message += " (did you mean " + std::string(guess) + "?)";
  }
  Fail(key, std::move(message));
  return std::nullopt;
}

std::optional<std::vector<int64_t>> TableReader::IntArray(std::string_view key, int64_t min,
                                                          int64_t max, size_t max_size) {
  std::string element = "integers " + DescribeIntRange(min, max);
  Note(key, "an array of 1 to " + std::to_string(max_size) + " " + element);
  const toml::node* node = Use(key);
  if (node == nullptr) return std::nullopt;
  auto array = node->as_array();
  if (array == nullptr || array->empty()) {
    Fail(key, "expected a non-empty array of " + element + "; got " +
                  (array == nullptr ? Describe(*node, true) : "[]"));
    return std::nullopt;
  }
  if (array->size() > max_size) {
    Fail(key, "expected at most " + std::to_string(max_size) + " elements; got " +
                  std::to_string(array->size()));
    return std::nullopt;
  }
  std::vector<int64_t> out;
  bool ok = true;
  for (size_t i = 0; i < array->size(); ++i) {
    const toml::node& item = *array->get(i);
    auto value = item.as_integer();
    if (value == nullptr || value->get() < min || value->get() > max) {
      int line = LineOfNode(item) > 0 ? LineOfNode(item) : LineOf(key);
      problems_->Add(line, KeyPath(key) + "[" + std::to_string(i) + "]",
                     "expected an integer " + DescribeIntRange(min, max) + "; got " +
                         Describe(item, value == nullptr));
      ok = false;
      continue;
    }
    out.push_back(value->get());
  }
  if (!ok) return std::nullopt;
  return out;
}

std::optional<std::vector<size_t>> TableReader::ChoiceArray(
    std::string_view key, std::span<const std::string_view> choices) {
  std::string expected = "one of " + JoinNames(choices);
  Note(key, "an array of strings, each " + expected);
  const toml::node* node = Use(key);
  if (node == nullptr) return std::nullopt;
  auto array = node->as_array();
  if (array == nullptr || array->empty()) {
    Fail(key, "expected a non-empty array of strings, each " + expected + "; got " +
                  (array == nullptr ? Describe(*node, true) : "[]"));
    return std::nullopt;
  }
  std::vector<size_t> out;
  bool ok = true;
  for (size_t i = 0; i < array->size(); ++i) {
    const toml::node& item = *array->get(i);
    auto value = item.as_string();
    auto it = value == nullptr
                  ? choices.end()
                  : std::find(choices.begin(), choices.end(), std::string_view(value->get()));
    if (it == choices.end()) {
      std::string message = "expected " + expected + "; got " + Describe(item, value == nullptr);
      if (value != nullptr) {
        if (auto guess = ClosestMatch(value->get(), choices); !guess.empty()) {
          message += " (did you mean " + std::string(guess) + "?)";
        }
      }
      int line = LineOfNode(item) > 0 ? LineOfNode(item) : LineOf(key);
      problems_->Add(line, KeyPath(key) + "[" + std::to_string(i) + "]", std::move(message));
      ok = false;
      continue;
    }
    out.push_back(static_cast<size_t>(it - choices.begin()));
  }
  if (!ok) return std::nullopt;
  return out;
}

TableReader TableReader::Table(std::string_view key) {
  Note(key, "a table [" + TablePattern(KeyPath(key)) + "]");
  const toml::node* node = Use(key);
  const toml::table* table = node == nullptr ? nullptr : node->as_table();
  if (node != nullptr && table == nullptr) {
    Expected(key, *node, "a table ([" + KeyPath(key) + "])", /*show_type=*/true);
  }
  return TableReader(table, KeyPath(key), problems_);
}

std::vector<const toml::table*> TableReader::TableArray(std::string_view key) {
  Note(key, "an array of tables [[" + TablePattern(KeyPath(key)) + "]]");
  const toml::node* node = Use(key);
  std::vector<const toml::table*> out;
  if (node == nullptr) return out;
  std::string expected = "an array of tables ([[" + KeyPath(key) + "]] sections)";
  auto array = node->as_array();
  if (array == nullptr) {
    Expected(key, *node, expected, /*show_type=*/true);
    return out;
  }
  for (size_t i = 0; i < array->size(); ++i) {
    const toml::node& item = *array->get(i);
    if (auto table = item.as_table()) {
      out.push_back(table);
    } else {
      int line = LineOfNode(item) > 0 ? LineOfNode(item) : LineOf(key);
      problems_->Add(line, KeyPath(key) + "[" + std::to_string(i) + "]",
                     "expected a table; got " + Describe(item, true));
    }
  }
  return out;
}

void TableReader::Finish(std::span<const std::string_view> known) {
  if (g_recording != nullptr) {
    for (std::string_view key : known) g_recording->known_.push_back({TablePattern(path_), std::string(key), ""});
  }
  if (table_ == nullptr) return;
  for (auto&& [key, node] : *table_) {
    if (used_.count(key.str()) != 0) continue;
    bool is_table = node.is_table() || node.is_array_of_tables();
    std::string message = is_table ? "unknown table" : "unknown key";
    if (auto guess = ClosestMatch(key.str(), known); !guess.empty()) {
      message += " (did you mean " + std::string(guess) + "?)";
    } else {
      message += "; expected one of " + JoinNames(known);
    }
    int line = static_cast<int>(key.source().begin.line);
    if (line == 0) line = LineOfNode(node);
    // A quoted TOML key can hold any character ("\u0000").
    problems_->Add(line, KeyPath(Printable(key.str())), std::move(message));
  }
}

}  // namespace actorrec::config
