// Crossed-feature columns (Wide&Deep's cross-product transformation, Cheng
// et al. 2016): each cross is one more table of a sample block, appended
// after the data's own tables, whose ids are a fixed hash of the sample's
// ids in the crossed tables. The oracle, caches, shards and sync then treat
// a cross like any other table; only the model knows it is wide-only
// (models/model.hpp).
//
// The id of a cross of tables (t_1, …, t_k) with ids (r_1, …, r_k):
//   h_0 = 0,  h_j = HashPair(h_{j−1}, r_j)  (data/gen/random.hpp: SplitMix64's
//   finalizer, Mix64(h ⊕ Mix64(r + 0x9e3779b97f4a7c15))),  id = h_k mod buckets.
// Multi-valued bags cross as their Cartesian product, the first table's id
// outermost (bags [a1, a2] and [b1, b2, b3] give (a1,b1), (a1,b2), (a1,b3),
// (a2,b1), …): a sample's cross bag holds the product of the bag sizes, and
// an empty bag in any crossed table leaves the cross's bag empty.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/status.hpp"
#include "data/sample_reader.hpp"

namespace actorrec::data {

struct CrossSpec {
  std::vector<uint32_t> tables;  // >= 2 distinct tables of the inner schema, in hash order
  uint64_t buckets = 0;          // in [2, 2^32)
  std::string key;               // names the cross in errors, e.g. "model.crosses[0]"
};

// A sample's cross bag may hold at most this many ids (the product of its
// bag sizes); a sample beyond it is an error naming the cross: 65536 ids
// already mean 256 KiB of one sample's row ids.
inline constexpr uint64_t kMaxCrossIds = 65536;

// The cross id of one combination of ids (one per crossed table, in order).
RowId CrossId(std::span<const RowId> ids, uint64_t buckets);

// `schema` with one table per cross appended, named after its tables
// ("C1_x_C2") with `buckets` rows. InvalidArgument naming the cross's key
// when it names a table `schema` lacks (`source` says which data).
Result<DatasetSchema> CrossedSchema(const DatasetSchema& schema, std::span<const CrossSpec> crosses,
                                    const std::string& source);

// Appends the crosses' tables to `block` (whose tables are the inner
// schema's). InvalidArgument naming the cross when a sample's bags multiply
// to more than kMaxCrossIds ids.
Status AppendCrosses(std::span<const CrossSpec> crosses, SampleBlock* block);

// `inner` with the crosses appended to its schema and to every block;
// `inner` itself when there are none. Fails as CrossedSchema.
Result<std::unique_ptr<SampleReader>> Crossed(std::unique_ptr<SampleReader> inner, std::vector<CrossSpec> crosses,
                                              const std::string& source);

}  // namespace actorrec::data
