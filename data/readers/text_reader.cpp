// TextReader and the dictionary's counting pass.
#include "data/readers/text_reader.hpp"

namespace actorrec::data::readers {
namespace {

Status CheckTables(const TextFormat& format, const std::vector<std::string>& names) {
  const auto& want = format.table_names();
  if (names.size() != want.size()) {
    return Status::InvalidArgument("the categorical mapping has " + std::to_string(names.size()) +
                                   " tables, the format has " + std::to_string(want.size()));
  }
  for (size_t t = 0; t < want.size(); ++t) {
    if (names[t] != want[t]) {
      return Status::InvalidArgument("categorical table " + std::to_string(t) + " is '" + names[t] +
                                     "' in the mapping, '" + want[t] + "' in the format");
    }
  }
  return Status::Ok();
}

}  // namespace

TextReader::TextReader(std::vector<std::string> paths, std::unique_ptr<TextFormat> format,
                       std::shared_ptr<const CategoricalMapping> mapping, BadRecordPolicy policy, size_t chunk_bytes)
    : format_(std::move(format)),
      mapping_(std::move(mapping)),
      scanner_(std::move(paths), format_.get(), policy, chunk_bytes) {
  schema_.dense_names = format_->dense_names();
  schema_.tables = mapping_->tables();
  scanner_.Shape(&record_);
}

Result<std::unique_ptr<TextReader>> TextReader::Open(std::vector<std::string> paths, std::unique_ptr<TextFormat> format,
                                                     std::shared_ptr<const CategoricalMapping> mapping,
                                                     BadRecordPolicy policy, size_t chunk_bytes) {
  ACTORREC_ASSERT(format != nullptr && mapping != nullptr, "TextReader needs a format and a mapping");
  std::vector<std::string> names;
  for (size_t t = 0; t < mapping->num_tables(); ++t) names.push_back(mapping->name(t));
  if (Status s = CheckTables(*format, names); !s.ok()) return s;
  return std::unique_ptr<TextReader>(
      new TextReader(std::move(paths), std::move(format), std::move(mapping), policy, chunk_bytes));
}

Status TextReader::Next(size_t max_samples, SampleBlock* out) {
  out->Reset(schema_);
  const size_t num_dense = schema_.num_dense();
  const size_t num_tables = schema_.num_tables();
  const CategoricalMapping& mapping = *mapping_;
  while (out->size() < max_samples) {
    bool got = false;
    if (Status s = scanner_.Next(&record_, &got); !s.ok()) {
      out->Reset(schema_);  // an error ends the stream: hand out no half block
      return s;
    }
    if (!got) break;
    out->labels.push_back(record_.label);
    out->dense.insert(out->dense.end(), record_.dense.begin(), record_.dense.begin() + num_dense);
    for (size_t t = 0; t < num_tables; ++t) {
      out->tables[t].AppendSingle(record_.present[t] ? mapping.Map(t, record_.keys[t]) : kMissingRow);
    }
  }
  return Status::Ok();
}

Result<std::vector<SourceFile>> IdentifyFiles(const std::vector<std::string>& paths) {
  std::vector<SourceFile> files;
  for (const auto& path : paths) {
    auto id = IdentifyFile(path);
    if (!id.ok()) return id.status();
    files.push_back(std::move(id).value());
  }
  return files;
}

std::vector<TableMappingSpec> DictionarySpecs(const TextFormat& format, uint64_t min_count) {
  std::vector<TableMappingSpec> specs;
  for (const auto& name : format.table_names()) specs.push_back({name, MappingKind::kDictionary, 0, min_count});
  return specs;
}

Result<CategoricalMapping> BuildMapping(const std::vector<std::string>& paths, TextFormat* format,
                                        std::vector<TableMappingSpec> specs, BadRecordPolicy policy,
                                        BadRecords* skipped) {
  std::vector<std::string> names;
  for (const auto& s : specs) names.push_back(s.name);
  if (Status s = CheckTables(*format, names); !s.ok()) return s;
  auto builder = DictionaryBuilder::Create(std::move(specs));
  if (!builder.ok()) return builder.status();
  RecordScanner scanner(paths, format, policy);
  RawRecord record;
  scanner.Shape(&record);
  const size_t num_tables = names.size();
  for (;;) {
    bool got = false;
    if (Status s = scanner.Next(&record, &got); !s.ok()) return s;
    if (!got) break;
    for (size_t t = 0; t < num_tables; ++t) {
      if (record.present[t]) builder->Add(t, record.keys[t]);
    }
  }
  if (skipped != nullptr) skipped->Add(scanner.bad_records());
  auto sources = IdentifyFiles(paths);
  if (!sources.ok()) return sources.status();
  auto mapping = std::move(builder).value().Finish();
  if (mapping.ok()) mapping->set_sources(std::move(sources).value());
  return mapping;
}

}  // namespace actorrec::data::readers
