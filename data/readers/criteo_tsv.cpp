// Criteo TSV line parsing.
#include "data/readers/criteo_tsv.hpp"

#include "data/readers/dense_transform.hpp"
#include "data/readers/fields.hpp"

namespace actorrec::data::readers {
namespace {

constexpr size_t kFields = 1 + kCriteoDense + kCriteoTables;

class CriteoTsv final : public TextFormat {
 public:
  CriteoTsv() {
    for (size_t j = 0; j < kCriteoDense; ++j) dense_names_.push_back(Numbered("I", j + 1));
    for (size_t t = 0; t < kCriteoTables; ++t) table_names_.push_back(Numbered("C", t + 1));
    fields_.reserve(kFields + 1);
  }

  const std::vector<std::string>& dense_names() const override { return dense_names_; }
  const std::vector<std::string>& table_names() const override { return table_names_; }
  bool has_header() const override { return false; }
  Status CheckHeader(const std::string&, std::string_view) override { return Status::Ok(); }

  bool Parse(std::string_view line, RawRecord* out, RecordError* error) override {
    SplitFields(line, "\t", kFields, &fields_);
    if (fields_.size() != kFields) {
      *error = {"wrong column count",
                "expected " + std::to_string(kFields) + " tab-separated fields, found " +
                    (fields_.size() > kFields ? "more" : std::to_string(fields_.size())),
                true};
      return false;
    }
    if (const long i = FindOverlongField(fields_); i >= 0) {
      *error = {"field too long",
                "field " + std::to_string(i + 1) + " is longer than " + std::to_string(kMaxFieldBytes) + " bytes"};
      return false;
    }
    const std::string_view label = fields_[0];
    if (label.size() != 1 || (label[0] != '0' && label[0] != '1')) {
      *error = {"unknown label value", "label is " + Quoted(label) + ", expected 0 or 1"};
      return false;
    }
    out->label = label[0] == '1' ? 1.0f : 0.0f;
    for (size_t j = 0; j < kCriteoDense; ++j) {
      const std::string_view f = fields_[1 + j];
      int64_t v = 0;
      if (f.empty()) {
        out->dense[j] = 0.0f;
      } else if (ParseInt64(f, &v)) {
        out->dense[j] = Log1pOfCount(v);
      } else {
        *error = {"non-numeric dense value", dense_names_[j] + " is " + Quoted(f) + ", expected an integer or nothing"};
        return false;
      }
    }
    for (size_t t = 0; t < kCriteoTables; ++t) {
      const std::string_view f = fields_[1 + kCriteoDense + t];
      uint32_t v = 0;
      if (f.empty()) {
        out->present[t] = 0;
      } else if (ParseHex32(f, &v)) {
        out->present[t] = 1;
        out->keys[t] = KeyOfHex(v);
      } else {
        *error = {"bad hex", table_names_[t] + " is " + Quoted(f) + ", expected 1 to 8 hex digits"};
        return false;
      }
    }
    return true;
  }

 private:
  std::vector<std::string> dense_names_;
  std::vector<std::string> table_names_;
  std::vector<std::string_view> fields_;
};

}  // namespace

std::unique_ptr<TextFormat> CriteoTsvFormat() { return std::make_unique<CriteoTsv>(); }

}  // namespace actorrec::data::readers
