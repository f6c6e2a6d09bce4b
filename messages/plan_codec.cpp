// TrainerPlan <-> Cap'n Proto, with structural validation on decode.
#include "messages/plan_codec.hpp"

#include <algorithm>

#include <string>

namespace actorrec::wire {
namespace {

void SetRows(const std::vector<oracle::RowSlot>& rows, capnp::List<RowSlot>::Builder list) {
  for (unsigned i = 0; i < rows.size(); ++i) {
    list[i].setTable(rows[i].table);
    list[i].setRow(rows[i].row);
    list[i].setSlot(rows[i].slot);
  }
}

template <class Vec>
void SetNumbers(const Vec& v, capnp::List<uint32_t>::Builder list) {
  for (unsigned i = 0; i < v.size(); ++i) list.set(i, v[i]);
}

template <class Vec>
void GetNumbers(capnp::List<uint32_t>::Reader list, Vec* out) {
  out->resize(list.size());
  for (unsigned i = 0; i < list.size(); ++i) (*out)[i] = list[i];
}

Status GetRows(capnp::List<RowSlot>::Reader list, const std::string& what, std::vector<oracle::RowSlot>* out) {
  out->resize(list.size());
  for (unsigned i = 0; i < list.size(); ++i) {
    const uint64_t row = list[i].getRow();
    if (row > UINT32_MAX) return Status::Corruption(what + " entry " + std::to_string(i) + ": row id above 2^32 - 1");
    (*out)[i] = {list[i].getTable(), static_cast<data::RowId>(row), list[i].getSlot()};
  }
  return Status::Ok();
}

// Structure of one table's features, as a trainer gathers by it.
Status CheckFeatures(const oracle::TableFeatures& f, const std::string& what) {
  const auto& offsets = f.offsets;
  if (offsets.empty() || offsets[0] != 0 || offsets.back() != f.inverse.size()) {
    return Status::Corruption(what + ": offsets must start at 0 and end at the inverse's length");
  }
  for (size_t i = 1; i < offsets.size(); ++i) {
    if (offsets[i] < offsets[i - 1]) {
      return Status::Corruption(what + ": offsets decrease at sample " + std::to_string(i));
    }
  }
  for (size_t p = 0; p < f.inverse.size(); ++p) {
    if (f.inverse[p] >= f.unique_slots.size()) {
      return Status::Corruption(what + ": inverse entry " + std::to_string(p) + " is " + std::to_string(f.inverse[p]) +
                                " with " + std::to_string(f.unique_slots.size()) + " unique slots");
    }
  }
  return Status::Ok();
}

// Every table's bag count: the slice's samples, or for a table of a bag
// group that group's tuple count U, which each of its samples' bagOf entries
// stays below; the groups name tables with features, each in one group.
Status CheckBagShapes(const oracle::TrainerPlan& plan, const std::string& name) {
  auto bags_of = [&](uint32_t table) -> int64_t {
    for (const auto& f : plan.features) {
      if (f.table == table) return static_cast<int64_t>(f.offsets.size()) - 1;
    }
    return -1;
  };
  std::vector<uint32_t> grouped;
  int64_t samples = -1;
  for (size_t g = 0; g < plan.bag_groups.size(); ++g) {
    const oracle::BagGroup& group = plan.bag_groups[g];
    const std::string what = name + " bag group " + std::to_string(g);
    if (group.tables.empty()) return Status::Corruption(what + ": no tables");
    if (samples >= 0 && static_cast<int64_t>(group.bag_of.size()) != samples) {
      return Status::Corruption(what + ": " + std::to_string(group.bag_of.size()) + " samples, group 0 has " +
                                std::to_string(samples));
    }
    samples = static_cast<int64_t>(group.bag_of.size());
    const int64_t tuples = bags_of(group.tables[0]);
    for (size_t k = 0; k < group.tables.size(); ++k) {
      const uint32_t t = group.tables[k];
      if ((k > 0 && t <= group.tables[k - 1]) || std::find(grouped.begin(), grouped.end(), t) != grouped.end()) {
        return Status::Corruption(what + ": table " + std::to_string(t) + " is out of order or in two groups");
      }
      grouped.push_back(t);
      if (bags_of(t) < 0 || bags_of(t) != tuples) {
        return Status::Corruption(what + ": table " + std::to_string(t) + " has no features or not the " +
                                  std::to_string(tuples) + " tuples of table " + std::to_string(group.tables[0]));
      }
    }
    for (size_t i = 0; i < group.bag_of.size(); ++i) {
      if (group.bag_of[i] >= tuples) {
        return Status::Corruption(what + ": sample " + std::to_string(i) + " uses tuple " +
                                  std::to_string(group.bag_of[i]) + " of " + std::to_string(tuples));
      }
    }
  }
  for (const auto& f : plan.features) {
    if (std::find(grouped.begin(), grouped.end(), f.table) != grouped.end()) continue;
    const int64_t bags = static_cast<int64_t>(f.offsets.size()) - 1;
    if (samples >= 0 && bags != samples) {
      return Status::Corruption(name + " features of table " + std::to_string(f.table) + ": " + std::to_string(bags) +
                                " samples, the slice has " + std::to_string(samples));
    }
    samples = bags;
  }
  return Status::Ok();
}

}  // namespace

Frame<TrainerPlan> EncodePlan(const oracle::TrainerPlan& plan) {
  return Encode<TrainerPlan>([&](TrainerPlan::Builder b) {
    b.setBatch(plan.batch);
    b.setTrainer(plan.trainer);
    b.setLookahead(plan.lookahead);
    b.setBarrier(plan.barrier);
    SetRows(plan.prefetch, b.initPrefetch(static_cast<unsigned>(plan.prefetch.size())));
    SetRows(plan.private_prefetch, b.initPrivatePrefetch(static_cast<unsigned>(plan.private_prefetch.size())));
    auto features = b.initFeatures(static_cast<unsigned>(plan.features.size()));
    for (unsigned k = 0; k < plan.features.size(); ++k) {
      const oracle::TableFeatures& f = plan.features[k];
      features[k].setTable(f.table);
      SetNumbers(f.unique_slots, features[k].initUniqueSlots(static_cast<unsigned>(f.unique_slots.size())));
      SetNumbers(f.inverse, features[k].initInverse(static_cast<unsigned>(f.inverse.size())));
      SetNumbers(f.offsets, features[k].initOffsets(static_cast<unsigned>(f.offsets.size())));
    }
    SetRows(plan.private_rows, b.initPrivateRows(static_cast<unsigned>(plan.private_rows.size())));
    SetRows(plan.critical, b.initCritical(static_cast<unsigned>(plan.critical.size())));
    SetRows(plan.delayed, b.initDelayed(static_cast<unsigned>(plan.delayed.size())));
    auto evictions = b.initEvictions(static_cast<unsigned>(plan.evictions.size()));
    for (unsigned i = 0; i < plan.evictions.size(); ++i) {
      evictions[i].setTable(plan.evictions[i].table);
      evictions[i].setRow(plan.evictions[i].row);
      evictions[i].setSlot(plan.evictions[i].slot);
      evictions[i].setWriter(plan.evictions[i].writer);
    }
    b.setOccupancy(plan.occupancy);
    auto groups = b.initBagGroups(static_cast<unsigned>(plan.bag_groups.size()));
    for (unsigned g = 0; g < plan.bag_groups.size(); ++g) {
      SetNumbers(plan.bag_groups[g].tables, groups[g].initTables(static_cast<unsigned>(plan.bag_groups[g].tables.size())));
      SetNumbers(plan.bag_groups[g].bag_of, groups[g].initBagOf(static_cast<unsigned>(plan.bag_groups[g].bag_of.size())));
    }
  });
}

Status DecodePlan(const Frame<TrainerPlan>& frame, oracle::TrainerPlan* out) {
  auto view = Open(frame);
  if (!view.ok()) return view.status();
  auto b = view->root();
  const std::string name = "plan of batch " + std::to_string(b.getBatch()) + " for trainer " +
                           std::to_string(b.getTrainer());
  const int64_t batch = b.getBatch();
  const uint32_t lookahead = b.getLookahead();
  if (batch < 0) return Status::Corruption(name + ": needs batch >= 0");
  // b − L − 1, or −1 when negative; a run resumed at batch k raises it to
  // k − 1 for its first L batches (the checkpoint holds every earlier
  // write-back): never above b − 1, never below b − L − 1.
  const int64_t lowest = batch - lookahead - 1 >= 0 ? batch - lookahead - 1 : -1;
  const int64_t barrier = b.getBarrier();
  if (barrier < lowest || barrier > std::max<int64_t>(batch - 1, -1)) {
    return Status::Corruption(name + ": barrier " + std::to_string(barrier) + " is outside [b - L - 1, b - 1] = [" +
                              std::to_string(lowest) + ", " + std::to_string(batch - 1) + "]");
  }
  out->batch = batch;
  out->trainer = b.getTrainer();
  out->lookahead = lookahead;
  out->barrier = barrier;
  out->occupancy = b.getOccupancy();
  if (Status s = GetRows(b.getPrefetch(), name + " prefetch", &out->prefetch); !s.ok()) return s;
  if (Status s = GetRows(b.getPrivatePrefetch(), name + " privatePrefetch", &out->private_prefetch); !s.ok()) return s;
  if (Status s = GetRows(b.getPrivateRows(), name + " privateRows", &out->private_rows); !s.ok()) return s;
  if (Status s = GetRows(b.getCritical(), name + " critical", &out->critical); !s.ok()) return s;
  if (Status s = GetRows(b.getDelayed(), name + " delayed", &out->delayed); !s.ok()) return s;
  auto evictions = b.getEvictions();
  out->evictions.resize(evictions.size());
  for (unsigned i = 0; i < evictions.size(); ++i) {
    const uint64_t row = evictions[i].getRow();
    if (row > UINT32_MAX) {
      return Status::Corruption(name + " evictions entry " + std::to_string(i) + ": row id above 2^32 - 1");
    }
    out->evictions[i] = {evictions[i].getTable(), static_cast<data::RowId>(row), evictions[i].getSlot(),
                         evictions[i].getWriter()};
  }
  auto features = b.getFeatures();
  out->features.resize(features.size());
  for (unsigned k = 0; k < features.size(); ++k) {
    oracle::TableFeatures& f = out->features[k];
    f.table = features[k].getTable();
    const std::string what = name + " features of table " + std::to_string(f.table);
    if (k > 0 && f.table <= out->features[k - 1].table) {
      return Status::Corruption(what + ": tables must be strictly ascending");
    }
    GetNumbers(features[k].getUniqueSlots(), &f.unique_slots);
    GetNumbers(features[k].getInverse(), &f.inverse);
    GetNumbers(features[k].getOffsets(), &f.offsets);
    if (Status s = CheckFeatures(f, what); !s.ok()) return s;
  }
  auto groups = b.getBagGroups();
  out->bag_groups.resize(groups.size());
  for (unsigned g = 0; g < groups.size(); ++g) {
    GetNumbers(groups[g].getTables(), &out->bag_groups[g].tables);
    GetNumbers(groups[g].getBagOf(), &out->bag_groups[g].bag_of);
  }
  return CheckBagShapes(*out, name);
}

}  // namespace actorrec::wire
