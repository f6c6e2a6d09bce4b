// Avazu CSV line parsing.
#include "data/readers/avazu_csv.hpp"

#include <array>
#include <chrono>

#include "data/readers/fields.hpp"

namespace actorrec::data::readers {
namespace {

constexpr std::array<std::string_view, 24> kColumns = {"id",         "click",        "hour",         "C1",
                                                       "banner_pos", "site_id",      "site_domain",  "site_category",
                                                       "app_id",     "app_domain",   "app_category", "device_id",
                                                       "device_ip",  "device_model", "device_type",  "device_conn_type",
                                                       "C14",        "C15",          "C16",          "C17",
                                                       "C18",        "C19",          "C20",          "C21"};
constexpr size_t kFirstPlain = 3;  // columns from C1 on map one-to-one to tables 2..

// YYMMDDHH -> hour of day and day of week (0 = Sunday). False if invalid.
bool ParseHour(std::string_view s, uint32_t* hour_of_day, uint32_t* day_of_week) {
  if (s.size() != 8) return false;
  uint32_t d[8];
  for (size_t i = 0; i < 8; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    d[i] = static_cast<uint32_t>(s[i] - '0');
  }
  using namespace std::chrono;
  const year_month_day date{year(2000 + static_cast<int>(d[0] * 10 + d[1])), month(d[2] * 10 + d[3]),
                            day(d[4] * 10 + d[5])};
  const uint32_t hh = d[6] * 10 + d[7];
  if (!date.ok() || hh > 23) return false;
  *hour_of_day = hh;
  *day_of_week = weekday(sys_days(date)).c_encoding();
  return true;
}

class AvazuCsv final : public TextFormat {
 public:
  AvazuCsv() {
    table_names_ = {"hour_of_day", "day_of_week"};
    for (size_t c = kFirstPlain; c < kColumns.size(); ++c) table_names_.emplace_back(kColumns[c]);
    fields_.reserve(kColumns.size() + 1);
  }

  const std::vector<std::string>& dense_names() const override { return dense_names_; }
  const std::vector<std::string>& table_names() const override { return table_names_; }
  bool has_header() const override { return true; }

  Status CheckHeader(const std::string& path, std::string_view line) override {
    SplitFields(line, ",", kColumns.size(), &fields_);
    for (size_t c = 0; c < kColumns.size() && c < fields_.size(); ++c) {
      if (fields_[c] != kColumns[c]) {
        return Status::InvalidArgument(path + ":1: header mismatch: column " + std::to_string(c + 1) + " is " +
                                       Quoted(fields_[c]) + ", expected '" + std::string(kColumns[c]) + "'");
      }
    }
    if (fields_.size() != kColumns.size()) {
      return Status::InvalidArgument(path + ":1: header mismatch: expected " + std::to_string(kColumns.size()) +
                                     " columns, found " +
                                     (fields_.size() > kColumns.size() ? "more" : std::to_string(fields_.size())));
    }
    return Status::Ok();
  }

  bool Parse(std::string_view line, RawRecord* out, RecordError* error) override {
    SplitFields(line, ",", kColumns.size(), &fields_);
    if (fields_.size() != kColumns.size()) {
      *error = {"wrong column count",
                "expected " + std::to_string(kColumns.size()) + " comma-separated fields, found " +
                    (fields_.size() > kColumns.size() ? "more" : std::to_string(fields_.size())),
                true};
      return false;
    }
    if (const long i = FindOverlongField(fields_); i >= 0) {
      *error = {"field too long", std::string(kColumns[static_cast<size_t>(i)]) + " is longer than " +
                                      std::to_string(kMaxFieldBytes) + " bytes"};
      return false;
    }
    const std::string_view click = fields_[1];
    if (click.size() != 1 || (click[0] != '0' && click[0] != '1')) {
      *error = {"unknown label value", "click is " + Quoted(click) + ", expected 0 or 1"};
      return false;
    }
    out->label = click[0] == '1' ? 1.0f : 0.0f;
    uint32_t hour_of_day = 0, day_of_week = 0;
    if (!ParseHour(fields_[2], &hour_of_day, &day_of_week)) {
      *error = {"bad hour value", "hour is " + Quoted(fields_[2]) + ", expected YYMMDDHH"};
      return false;
    }
    out->present[0] = out->present[1] = 1;
    out->keys[0] = hour_of_day;
    out->keys[1] = day_of_week;
    for (size_t c = kFirstPlain; c < kColumns.size(); ++c) {
      const size_t t = c - kFirstPlain + 2;
      out->present[t] = fields_[c].empty() ? 0 : 1;
      if (!fields_[c].empty()) out->keys[t] = KeyOfString(fields_[c]);
    }
    return true;
  }

 private:
  std::vector<std::string> dense_names_;
  std::vector<std::string> table_names_;
  std::vector<std::string_view> fields_;
};

}  // namespace

std::unique_ptr<TextFormat> AvazuCsvFormat() { return std::make_unique<AvazuCsv>(); }

}  // namespace actorrec::data::readers
