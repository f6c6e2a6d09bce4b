// libFM line parsing.
#include "data/readers/libfm.hpp"

#include <algorithm>

#include "data/readers/fields.hpp"

namespace actorrec::data::readers {
namespace {

class Libfm final : public TextFormat {
 public:
  explicit Libfm(const LibfmOptions& options) : options_(options) {
    for (size_t t = 0; t < options.fields; ++t) table_names_.push_back(Numbered("field", t));
  }

  const std::vector<std::string>& dense_names() const override { return dense_names_; }
  const std::vector<std::string>& table_names() const override { return table_names_; }
  bool has_header() const override { return false; }
  Status CheckHeader(const std::string&, std::string_view) override { return Status::Ok(); }

  bool Parse(std::string_view line, RawRecord* out, RecordError* error) override {
    SplitWords(line);
    const size_t features = words_.empty() ? 0 : words_.size() - 1;  // the first word is the label
    if (words_.empty() || (!options_.field_ids && features != options_.fields) ||
        (options_.field_ids && features > options_.fields)) {
      *error = {"wrong column count",
                "expected a label and " + std::string(options_.field_ids ? "at most " : "") +
                    std::to_string(options_.fields) + " features (dataset.libfm.fields), found " +
                    (words_.empty() ? std::string("an empty line") : std::to_string(features) + " features"),
                true};
      return false;
    }
    if (const long i = FindOverlongField(words_); i >= 0) {
      *error = {"field too long", "word " + std::to_string(i + 1) + " is longer than " +
                                      std::to_string(kMaxFieldBytes) + " bytes"};
      return false;
    }
    double label = 0;
    if (!ParseDouble(words_[0], &label)) {
      *error = {"unknown label value", "the label is " + Quoted(words_[0]) + ", expected a number"};
      return false;
    }
    out->label = label > 0 ? 1.0f : 0.0f;
    std::fill(out->present.begin(), out->present.end(), uint8_t{0});
    for (size_t k = 1; k < words_.size(); ++k) {
      // field:feature:value or feature:value, split at the colons.
      const std::string_view word = words_[k];
      const size_t last = word.rfind(':');
      const size_t first = options_.field_ids ? word.find(':') : std::string_view::npos;
      if (last == std::string_view::npos || (options_.field_ids && first == last)) {
        *error = {"bad libfm feature", "feature " + std::to_string(k) + " is " + Quoted(word) + ", expected " +
                                           (options_.field_ids ? "field:feature:value" : "feature:value")};
        return false;
      }
      double value = 0;
      if (!ParseDouble(word.substr(last + 1), &value) || value != 1.0) {
        *error = {"bad libfm value", "feature " + std::to_string(k) + " is " + Quoted(word) +
                                         ": its value must be 1 (features are one-hot categorical ids)"};
        return false;
      }
      size_t table = k - 1;
      const size_t id_begin = options_.field_ids ? first + 1 : 0;
      if (options_.field_ids) {
        int64_t field = -1;
        if (!ParseInt64(word.substr(0, first), &field) || field < 0 ||
            static_cast<uint64_t>(field) >= options_.fields) {
          *error = {"bad libfm field", "feature " + std::to_string(k) + " is " + Quoted(word) +
                                           ": the field must be an integer in [0, " +
                                           std::to_string(options_.fields) + ") (dataset.libfm.fields)"};
          return false;
        }
        table = static_cast<size_t>(field);
        if (out->present[table]) {
          *error = {"repeated libfm field", "field " + std::to_string(field) + " appears twice"};
          return false;
        }
      }
      const std::string_view id = word.substr(id_begin, last - id_begin);
      if (id.empty()) {
        *error = {"bad libfm feature", "feature " + std::to_string(k) + " is " + Quoted(word) + ": no feature id"};
        return false;
      }
      out->present[table] = 1;
      out->keys[table] = KeyOfString(id);
    }
    return true;
  }

 private:
  // Splits at runs of spaces and tabs.
  void SplitWords(std::string_view line) {
    words_.clear();
    size_t at = 0;
    while (at < line.size()) {
      while (at < line.size() && (line[at] == ' ' || line[at] == '\t' || line[at] == '\r')) ++at;
      const size_t begin = at;
      while (at < line.size() && line[at] != ' ' && line[at] != '\t' && line[at] != '\r') ++at;
      if (at > begin) words_.push_back(line.substr(begin, at - begin));
    }
  }

  LibfmOptions options_;
  std::vector<std::string> dense_names_;
  std::vector<std::string> table_names_;
  std::vector<std::string_view> words_;
};

}  // namespace

std::unique_ptr<TextFormat> LibfmFormat(const LibfmOptions& options) { return std::make_unique<Libfm>(options); }

}  // namespace actorrec::data::readers
