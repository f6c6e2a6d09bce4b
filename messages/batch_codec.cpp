// Batch <-> Cap'n Proto, with structural validation on decode.
#include "messages/batch_codec.hpp"

#include <algorithm>
#include <string>

#include "messages/text.hpp"

namespace actorrec::wire {
namespace {

template <class List, class Vec>
void CopyTo(List list, Vec* out) {
  out->resize(list.size());
  for (unsigned i = 0; i < list.size(); ++i) (*out)[i] = static_cast<typename Vec::value_type>(list[i]);
}

template <class Builder, class Vec>
void CopyFrom(const Vec& v, Builder list) {
  for (unsigned i = 0; i < v.size(); ++i) list.set(i, v[i]);
}

// Whether every bag holds exactly one id: offsets 0, 1, …, n.
bool SingleHot(const data::SampleBlock::Table& t) {
  if (t.offsets.compact()) return t.offsets.size() == t.values.size() + 1;
  if (t.offsets.size() != t.values.size() + 1) return false;
  bool iota = true;
  for (size_t i = 0; i < t.offsets.size(); ++i) iota &= t.offsets[i] == i;
  return iota;
}

// Values and offsets; offsets left empty for single-hot bags (batch.capnp).
template <class Builder>
void SetBags(const data::SampleBlock::Table& t, Builder b) {
  CopyFrom(t.values, b.initValues(static_cast<unsigned>(t.values.size())));
  if (!SingleHot(t)) CopyFrom(t.offsets, b.initOffsets(static_cast<unsigned>(t.offsets.size())));
}

// Values and offsets of `bags` bags, checked; `what` names them in errors.
template <class Reader>
Status ReadBags(Reader r, size_t bags, const std::string& what, data::SampleBlock::Table* out) {
  auto offsets = r.getOffsets();
  auto values = r.getValues();
  if (offsets.size() == 0) {  // single-hot: one id a bag
    if (values.size() != bags) {
      return Status::Corruption(what + " has no offsets (one id a bag) but " + std::to_string(values.size()) +
                                " values for " + std::to_string(bags) + " bags");
    }
    for (unsigned i = 0; i < values.size(); ++i) {
      if (values[i] > UINT32_MAX) return Status::Corruption(what + ": row id above 2^32 - 1 at value " + std::to_string(i));
    }
    CopyTo(values, &out->values);
    out->offsets.SetSingleHot(bags);
    return Status::Ok();
  }
  if (offsets.size() != bags + 1) {
    return Status::Corruption(what + " has " + std::to_string(offsets.size()) + " offsets for " +
                              std::to_string(bags) + " bags");
  }
  if (offsets[0] != 0 || offsets[offsets.size() - 1] != values.size()) {
    return Status::Corruption(what + ": offsets must start at 0 and end at the value count");
  }
  for (unsigned i = 1; i < offsets.size(); ++i) {
    if (offsets[i] < offsets[i - 1]) return Status::Corruption(what + ": offsets decrease at bag " + std::to_string(i));
  }
  for (unsigned i = 0; i < values.size(); ++i) {
    if (values[i] > UINT32_MAX) return Status::Corruption(what + ": row id above 2^32 - 1 at value " + std::to_string(i));
  }
  CopyTo(values, &out->values);
  CopyTo(offsets, &out->offsets);
  return Status::Ok();
}

}  // namespace

Frame<Batch> EncodeBatch(const data::Batch& batch, const data::Ikjt* ikjt) {
  const auto& s = batch.samples;
  return Encode<Batch>([&](Batch::Builder b) {
    b.setEpoch(batch.epoch);
    b.setIndex(batch.index);
    b.setFirstSample(batch.first_sample);
    b.setSamples(static_cast<uint32_t>(s.size()));
    b.setTrainer(batch.trainer);
    b.setSliceBegin(batch.slice_begin);
    b.setSliceEnd(batch.slice_end);
    b.setNumDense(s.num_dense);
    CopyFrom(s.dense, b.initDense(static_cast<unsigned>(s.dense.size())));
    CopyFrom(s.labels, b.initLabels(static_cast<unsigned>(s.labels.size())));
    if (ikjt == nullptr) {
      auto kjt = b.getSparse().initKjt(static_cast<unsigned>(s.tables.size()));
      for (unsigned t = 0; t < s.tables.size(); ++t) {
        kjt[t].setTable(t);
        SetBags(s.tables[t], kjt[t]);
      }
      return;
    }
    auto groups = b.getSparse().initIkjt(static_cast<unsigned>(ikjt->groups.size()));
    for (unsigned g = 0; g < ikjt->groups.size(); ++g) {
      const auto& group = ikjt->groups[g];
      CopyFrom(group.tables, groups[g].initTables(static_cast<unsigned>(group.tables.size())));
      CopyFrom(group.inverse, groups[g].initInverse(static_cast<unsigned>(group.inverse.size())));
      auto unique = groups[g].initUnique(static_cast<unsigned>(group.unique.size()));
      for (unsigned k = 0; k < group.unique.size(); ++k) SetBags(group.unique[k], unique[k]);
    }
  });
}

Status DecodeBatch(const Frame<Batch>& frame, data::Batch* out, data::Ikjt* ikjt_out) {
  auto view = Open(frame);
  if (!view.ok()) return view.status();
  auto b = view->root();
  const std::string name = "batch " + std::to_string(b.getIndex()) + " of epoch " + std::to_string(b.getEpoch());
  const size_t n = b.getSamples();
  const size_t d = b.getNumDense();
  if (b.getSliceEnd() < b.getSliceBegin() || b.getSliceEnd() - b.getSliceBegin() != n) {
    return Status::Corruption(name + ": slice [" + std::to_string(b.getSliceBegin()) + ", " +
                              std::to_string(b.getSliceEnd()) + ") does not hold " + std::to_string(n) + " samples");
  }
  if (b.getLabels().size() != n || b.getDense().size() != n * d) {
    return Status::Corruption(name + ": " + std::to_string(b.getLabels().size()) + " labels and " +
                              std::to_string(b.getDense().size()) + " dense values for " + std::to_string(n) +
                              " samples of " + std::to_string(d) + " dense features");
  }
  out->epoch = b.getEpoch();
  out->index = b.getIndex();
  out->first_sample = b.getFirstSample();
  out->trainer = b.getTrainer();
  out->slice_begin = b.getSliceBegin();
  out->slice_end = b.getSliceEnd();
  auto& s = out->samples;
  s.num_dense = static_cast<uint32_t>(d);
  CopyTo(b.getLabels(), &s.labels);
  CopyTo(b.getDense(), &s.dense);
  auto sparse = b.getSparse();
  if (ikjt_out) ikjt_out->groups.clear();
  if (sparse.isKjt()) {
    auto kjt = sparse.getKjt();
    s.tables.assign(kjt.size(), {});
    for (unsigned t = 0; t < kjt.size(); ++t) {
      if (kjt[t].getTable() != t) {
        return Status::Corruption(name + ": KJT entry " + std::to_string(t) + " is for table " +
                                  std::to_string(kjt[t].getTable()) + "; tables must come in order");
      }
      if (auto st = ReadBags(kjt[t], n, name + " table " + std::to_string(t), &s.tables[t]); !st.ok()) return st;
    }
    return Status::Ok();
  }
  data::Ikjt ikjt;
  size_t num_tables = 0;
  for (auto g : sparse.getIkjt()) num_tables += g.getTables().size();
  std::vector<int> seen(num_tables, 0);
  for (auto g : sparse.getIkjt()) {
    data::IkjtGroup group;
    CopyTo(g.getTables(), &group.tables);
    CopyTo(g.getInverse(), &group.inverse);
    if (g.getUnique().size() != group.tables.size() || group.inverse.size() != n) {
      return Status::Corruption(name + ": an IKJT group's lists disagree with its tables or samples");
    }
    size_t tuples = 0;
    for (unsigned k = 0; k < group.tables.size(); ++k) {
      const uint32_t t = group.tables[k];
      if (t >= num_tables || seen[t]++) {
        return Status::Corruption(name + ": IKJT table " + std::to_string(t) + " is out of range or repeated");
      }
      if (k == 0) {  // the first table's bag count: its offsets less one, or one bag an id without offsets
        auto first = g.getUnique()[0];
        tuples = first.getOffsets().size() > 0 ? first.getOffsets().size() - 1 : first.getValues().size();
      }
      group.unique.emplace_back();
      if (auto st = ReadBags(g.getUnique()[k], tuples, name + " IKJT table " + std::to_string(t), &group.unique.back());
          !st.ok()) {
        return st;
      }
    }
    for (uint32_t u : group.inverse) {
      if (u >= tuples) return Status::Corruption(name + ": IKJT inverse index " + std::to_string(u) + " >= " +
                                                 std::to_string(tuples) + " tuples");
    }
    ikjt.groups.push_back(std::move(group));
  }
  s.tables = data::Expand(ikjt, num_tables);
  if (ikjt_out) *ikjt_out = std::move(ikjt);
  return Status::Ok();
}

}  // namespace actorrec::wire
