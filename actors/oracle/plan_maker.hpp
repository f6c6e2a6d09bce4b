// PlanMaker: what the oracle actor needs of a planner. Planner plans the
// lookahead modes (lrpp_delayed, lrpp, replicated); DirectPlanner the modes
// without lookahead (ideal, static_hot, no_cache) in the same plan format,
// so that the rest of the pipeline runs every mode alike.
//
// The protocol, one thread: Push batches while CanPush(); PlanNext while
// Ready(); Finish() once the data has ended; Done() once every batch is
// planned. Planner's header describes it in full.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "actors/oracle/batch_rows.hpp"
#include "plan/trainer_plan.hpp"
#include "base/status.hpp"

namespace actorrec::oracle {

class PlanMaker {
 public:
  virtual ~PlanMaker() = default;
  virtual bool CanPush() const = 0;
  virtual Status Push(BatchRows rows) = 0;
  virtual Status Finish() = 0;
  virtual bool Ready() const = 0;
  virtual Status PlanNext(BatchPlan* plan) = 0;
  virtual bool Done() const = 0;
  // The batch number the next PlanNext plans.
  virtual uint64_t next_batch() const = 0;
  // The lookahead L of its plans; 0 while an automatic L waits for its
  // probe, and for the direct modes (their plans carry their own).
  virtual uint32_t lookahead() const = 0;
  // How the cache is used, for the log (the lookahead and how it was chosen).
  virtual const std::string& lookahead_report() const = 0;
  // A spent BatchRows to build the next batch into (keeps its capacity).
  virtual BatchRows RecycledRows() = 0;
};

struct PlannerOptions;
struct DirectOptions;

// The planner of a run: a DirectPlanner when `direct` is set (the modes
// without lookahead), else the lookahead Planner. What the oracle actor and
// `actorrec plan` both use. REQUIRES: the options are valid (Validate).
std::unique_ptr<PlanMaker> MakePlanMaker(const PlannerOptions& options, const DirectOptions* direct);

}  // namespace actorrec::oracle
