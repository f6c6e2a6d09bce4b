// FormatTable and ToJson: every table shown, JSON well formed.
#include "data/stats/stats_format.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

using namespace actorrec::data::stats;

namespace {

DatasetStats Example() {
  DatasetStats s;
  s.samples = 1000;
  s.batches = 3;
  s.batch_size = 400;
  s.positive_rate = 0.25;
  s.top_fractions = {0.001, 0.01};
  s.cache_fractions = {0.01};
  for (const char* name : {"C1", "odd \"name\"\\\n"}) {
    TableStats t;
    t.name = name;
    t.rows = 100;
    t.accesses = 1000;
    t.bags = 1000;
    t.distinct_rows = 90;
    t.mean_bag_length = 1;
    t.top_share_of_rows = {0.1, 0.2};
    t.top_share_of_seen = {0.1, 0.2};
    t.mean_unique_rows_per_batch = 80.5;
    t.coalescing_ratio = 0.24;
    t.dedupe_factor = 1.5;
    t.dedupe_factor_model = std::numeric_limits<double>::quiet_NaN();
    t.cache_hit_rate = {0.33};
    s.tables.push_back(t);
  }
  return s;
}

// Brackets and braces balance outside strings, strings close, escapes are legal.
bool Balanced(const std::string& json) {
  std::string stack;
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      if (c == '\\') {
        if (i + 1 >= json.size() || std::string("\"\\/bfnrtu").find(json[i + 1]) == std::string::npos) return false;
        ++i;
      } else if (c == '"') {
        in_string = false;
      } else if (static_cast<unsigned char>(c) < 0x20) {
        return false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      stack += c;
    } else if (c == '}' || c == ']') {
      if (stack.empty() || stack.back() != (c == '}' ? '{' : '[')) return false;
      stack.pop_back();
    }
  }
  return stack.empty() && !in_string;
}

}  // namespace

TEST_CASE("the stats JSON is balanced and carries every key", "[data]") {
  const std::string json = ToJson(Example());
  CHECK(Balanced(json));
  for (const char* key : {"samples", "batches", "batch_size", "positive_rate", "top_fractions", "cache_fractions",
                          "tables", "name", "rows", "accesses", "distinct_rows", "mean_bag_length",
                          "top_share_of_rows", "top_share_of_seen", "mean_unique_rows_per_batch", "coalescing_ratio",
                          "dedupe_factor", "dedupe_factor_model", "cache_hit_rate"}) {
    std::string quoted = "\"";  // appended, not "\"" + key: GCC 12 warns falsely (-Wrestrict)
    quoted.append(key).append("\":");
    CHECK(json.find(quoted) != std::string::npos);
  }
  CHECK(json.find("\"dedupe_factor_model\": null") != std::string::npos);  // NaN is not JSON
  CHECK(json.find("nan") == std::string::npos);
  CHECK(json.find("0.001") != std::string::npos);
  CHECK(json.find(R"("odd \"name\"\\\u000a")") != std::string::npos);
}

TEST_CASE("the stats table has a header, a row per table and a legend", "[data]") {
  const std::string text = FormatTable(Example());
  CHECK(text.find("samples 1000, batches 3 of 400") != std::string::npos);
  CHECK(text.find("top0.1%") != std::string::npos);
  CHECK(text.find("top1%seen") != std::string::npos);
  CHECK(text.find("hit@1%") != std::string::npos);
  CHECK(text.find("\nC1 ") != std::string::npos);
  CHECK(text.find("33.00%") != std::string::npos);
  CHECK(text.find("DedupeFactor") != std::string::npos);
}
