#include "data/crosses.hpp"

#include "data/gen/random.hpp"

namespace actorrec::data {

RowId CrossId(std::span<const RowId> ids, uint64_t buckets) {
  uint64_t h = 0;
  for (RowId r : ids) h = gen::HashPair(h, r);
  return static_cast<RowId>(h % buckets);
}

Result<DatasetSchema> CrossedSchema(const DatasetSchema& schema, std::span<const CrossSpec> crosses,
                                    const std::string& source) {
  DatasetSchema out = schema;
  for (const CrossSpec& cross : crosses) {
    TableSchema table;
    for (uint32_t t : cross.tables) {
      if (t >= schema.num_tables()) {
        return Status::InvalidArgument(cross.key + ".tables: table " + std::to_string(t) + " does not exist: " +
                                       source + " has " + std::to_string(schema.num_tables()) + " tables" +
                                       (schema.num_tables() == 0 ? std::string()
                                                                 : ", 0 to " + std::to_string(schema.num_tables() - 1)));
      }
      if (!table.name.empty()) table.name.append("_x_");
      table.name.append(schema.tables[t].name);
    }
    table.rows = cross.buckets;
    out.tables.push_back(std::move(table));
  }
  return out;
}

Status AppendCrosses(std::span<const CrossSpec> crosses, SampleBlock* block) {
  const size_t inner = block->tables.size(), n = block->size();
  block->tables.resize(inner + crosses.size());
  std::vector<RowId> ids;
  std::vector<uint32_t> at;  // the combination being hashed: a position in each crossed bag
  for (size_t c = 0; c < crosses.size(); ++c) {
    const CrossSpec& cross = crosses[c];
    const size_t k = cross.tables.size();
    SampleBlock::Table& out = block->tables[inner + c];
    out.offsets.SetSingleHot(0);
    out.values.clear();
    ids.resize(k);
    at.resize(k);
    for (size_t i = 0; i < n; ++i) {
      uint64_t product = 1;
      for (uint32_t t : cross.tables) {
        const auto& offsets = block->tables[t].offsets;
        product *= offsets[i + 1] - offsets[i];
        if (product > kMaxCrossIds) break;  // no overflow: each factor is below 2^32
      }
      if (product > kMaxCrossIds) {
        return Status::InvalidArgument(cross.key + ": a sample's bags in the crossed tables hold more than " +
                                       std::to_string(kMaxCrossIds) + " id combinations together; cross tables with "
                                       "short bags (single-valued features)");
      }
      // Odometer over the bags, the last table's position fastest.
      for (size_t j = 0; j < k; ++j) at[j] = block->tables[cross.tables[j]].offsets[i];
      for (uint64_t p = 0; p < product; ++p) {
        for (size_t j = 0; j < k; ++j) ids[j] = block->tables[cross.tables[j]].values[at[j]];
        out.values.push_back(CrossId(ids, cross.buckets));
        for (size_t j = k; j-- > 0;) {
          const auto& offsets = block->tables[cross.tables[j]].offsets;
          if (++at[j] < offsets[i + 1]) break;
          at[j] = offsets[i];
        }
      }
      out.CloseBag();
    }
  }
  return Status::Ok();
}

namespace {

class CrossedReader final : public SampleReader {
 public:
  CrossedReader(std::unique_ptr<SampleReader> inner, std::vector<CrossSpec> crosses, DatasetSchema schema)
      : inner_(std::move(inner)), crosses_(std::move(crosses)), schema_(std::move(schema)) {}

  const DatasetSchema& schema() const override { return schema_; }
  const BadRecords& bad_records() const override { return inner_->bad_records(); }

  Status Next(size_t max_samples, SampleBlock* out) override {
    if (Status s = inner_->Next(max_samples, out); !s.ok()) return s;
    return AppendCrosses(crosses_, out);
  }

 private:
  std::unique_ptr<SampleReader> inner_;
  std::vector<CrossSpec> crosses_;
  DatasetSchema schema_;
};

}  // namespace

Result<std::unique_ptr<SampleReader>> Crossed(std::unique_ptr<SampleReader> inner, std::vector<CrossSpec> crosses,
                                              const std::string& source) {
  if (crosses.empty()) return inner;
  auto schema = CrossedSchema(inner->schema(), crosses, source);
  if (!schema.ok()) return schema.status();
  return std::unique_ptr<SampleReader>(
      std::make_unique<CrossedReader>(std::move(inner), std::move(crosses), std::move(schema).value()));
}

}  // namespace actorrec::data
