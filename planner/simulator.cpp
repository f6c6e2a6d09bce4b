// The cluster simulation: a fixed-order replay of links and compute.
#include "planner/simulator.hpp"

#include <algorithm>
#include <cassert>

namespace actorrec::planner {

BatchTrace TraceOf(const oracle::BatchPlan& plan) {
  BatchTrace t;
  const size_t w = plan.trainers.size();
  t.fetch.assign(w, plan.prefetch.size());
  t.write_back.assign(w, 0);
  for (size_t k = 0; k < w; ++k) {
    t.fetch[k] += plan.trainers[k].private_prefetch.size();
    t.write_back[k] += plan.trainers[k].private_prefetch.size();
  }
  for (const oracle::Eviction& e : plan.evictions) {
    if (e.writer < w) ++t.write_back[e.writer];
  }
  t.critical = plan.critical.size();
  t.delayed = plan.delayed.size();
  t.barrier = plan.barrier;
  t.ahead = plan.lookahead > 0;
  return t;
}

namespace {

// The free time of every link direction (the foreground transfers).
struct Links {
  std::vector<double> trainer_in, trainer_out, shard_in, shard_out;
};

// The delayed syncs: a queue served only while every trainer link is idle,
// preempted by any foreground transfer (the next critical sync first).
struct Background {
  struct Job {
    size_t batch;
    double ready;      // the batch's critical sync end
    double remaining;  // seconds of the collective still to run
  };
  std::vector<Job> queue;  // in batch order; served front first
  size_t front = 0;
  double clock = 0;        // time up to which the queue has been served
};

}  // namespace

SimResult Simulate(const std::vector<BatchTrace>& trace, const Workload& work, const HardwareProfile& hw,
                   const SimOptions& options) {
  const uint32_t w = std::max<uint32_t>(work.trainers, 1), h = std::max<uint32_t>(work.shard_hosts, 1);
  Links links{std::vector<double>(w, 0.0), std::vector<double>(w, 0.0), std::vector<double>(h, 0.0),
              std::vector<double>(h, 0.0)};
  const size_t n = trace.size();
  SimResult r;
  r.batches.assign(n, BatchTimes{});
  // fetched[b][k]: when trainer k's rows for b landed; -1: not issued yet.
  std::vector<std::vector<double>> fetched(n, std::vector<double>(w, -1.0));
  // The latest acknowledgement of the write-backs of batches <= b.
  std::vector<double> acked_upto(n, 0.0);
  std::vector<double> step_end(w, 0.0);  // when each trainer may compute again
  Background background;

  auto fetch = [&](size_t b) {
    const BatchTrace& t = trace[b];
    assert(t.fetch.size() == w && t.write_back.size() == w);
    double ready = 0;
    if (t.barrier >= 0) ready = acked_upto[std::min<size_t>(static_cast<size_t>(t.barrier), n - 1)];
    double last = 0;
    for (uint32_t k = 0; k < w; ++k) {
      double landed = ready;
      if (t.fetch[k] > 0) {
        const double seconds = static_cast<double>(t.fetch[k]) * work.row_bytes / h / hw.network_bw;
        for (uint32_t s = 0; s < h; ++s) {
          const double start = std::max({ready, links.trainer_in[k], links.shard_out[s]});
          links.trainer_in[k] = links.shard_out[s] = start + seconds;
          landed = std::max(landed, start + seconds + hw.network_latency);
        }
        if (hw.host_device_bw > 0) landed += static_cast<double>(t.fetch[k]) * work.row_bytes / hw.host_device_bw;
      }
      fetched[b][k] = landed;
      last = std::max(last, landed);
    }
    r.batches[b].fetch_done = last;
  };
  auto trainer_links_free = [&] {
    double free = 0;
    for (uint32_t k = 0; k < w; ++k) free = std::max({free, links.trainer_in[k], links.trainer_out[k]});
    return free;
  };
  // Serves the delayed syncs in the idle time of every trainer link before
  // `until`; with `upto`, runs every job of batches <= upto to its end
  // whatever comes after (a later batch reads their rows), holding the links.
  auto serve_background = [&](double until, int64_t upto) {
    double clock = std::max(background.clock, trainer_links_free());
    while (background.front < background.queue.size()) {
      Background::Job& job = background.queue[background.front];
      const bool forced = static_cast<int64_t>(job.batch) <= upto;
      const double start = std::max(clock, job.ready);
      if (!forced && start >= until) break;
      const double run = forced ? job.remaining : std::min(job.remaining, until - start);
      job.remaining -= run;
      clock = start + run;
      if (job.remaining > 0) break;
      r.batches[job.batch].delayed_end = clock;
      ++background.front;
      if (forced) {
        for (uint32_t k = 0; k < w; ++k) {
          links.trainer_in[k] = std::max(links.trainer_in[k], clock);
          links.trainer_out[k] = std::max(links.trainer_out[k], clock);
        }
      }
    }
    background.clock = clock;
  };
  // A foreground sum over every trainer's link, both directions, once `ready`.
  auto all_reduce = [&](double bytes, double ready) {
    const double start = std::max(ready, trainer_links_free());
    const double end = start + AllReduceSeconds(bytes, w, work.collective, hw);
    if (end > start) {
      for (uint32_t k = 0; k < w; ++k) links.trainer_in[k] = links.trainer_out[k] = end;
    }
    return end;
  };

  for (size_t b = 0; b < n; ++b) {
    const BatchTrace& t = trace[b];
    if (b == 0 || !trace[b].ahead) {
      if (fetched[b][0] < 0) fetch(b);
    }
    if (b + 1 < n && trace[b + 1].ahead && fetched[b + 1][0] < 0) fetch(b + 1);
    // Batch b may read rows whose delayed sync was issued after b − 2.
    if (b >= 2) serve_background(0, static_cast<int64_t>(b) - 2);
    const double delayed_before = b >= 2 ? r.batches[b - 2].delayed_end : 0.0;
    BatchTimes& times = r.batches[b];
    double all_computed = 0, previous_end = 0;
    for (uint32_t k = 0; k < w; ++k) {
      const double start = std::max({fetched[b][k], step_end[k], delayed_before});
      previous_end = std::max(previous_end, step_end[k]);
      times.compute_start = std::max(times.compute_start, start);
      all_computed = std::max(all_computed, start + options.compute_s);
    }
    times.compute_end = all_computed;
    // The delayed syncs run while b computes, up to b's critical sync.
    serve_background(all_computed, -1);
    times.critical_end = all_reduce(work.dense_bytes + static_cast<double>(t.critical) * work.sync_row_bytes,
                                    all_computed);
    const double delayed_bytes = static_cast<double>(t.delayed) * work.sync_row_bytes;
    if (options.delayed_yields) {
      times.delayed_end = times.critical_end;
      const double delayed_s = AllReduceSeconds(delayed_bytes, w, work.collective, hw);
      if (delayed_s > 0) background.queue.push_back({b, times.critical_end, delayed_s});
    } else {
      times.delayed_end = all_reduce(delayed_bytes, times.critical_end);
    }
    std::fill(step_end.begin(), step_end.end(), times.critical_end);
    double ack = times.critical_end;
    for (uint32_t k = 0; k < w; ++k) {
      if (t.write_back[k] == 0) continue;
      const double seconds = static_cast<double>(t.write_back[k]) * work.row_bytes / h / hw.network_bw;
      for (uint32_t s = 0; s < h; ++s) {
        const double start = std::max({times.critical_end, links.trainer_out[k], links.shard_in[s]});
        links.trainer_out[k] = links.shard_in[s] = start + seconds;
        ack = std::max(ack, start + seconds + hw.network_latency);
      }
    }
    times.write_back_ack = ack;
    acked_upto[b] = std::max(ack, b > 0 ? acked_upto[b - 1] : 0.0);
    if (b > 0) {
      r.compute_s += options.compute_s;
      r.fetch_wait_s += times.compute_start - previous_end;
      r.sync_wait_s += times.critical_end - times.compute_end;
    }
  }
  // The delayed syncs still queued end after the last batch.
  serve_background(0, static_cast<int64_t>(n));
  if (n > 0) {
    r.makespan = r.batches[n - 1].critical_end;
    if (n > 1) {
      const double steps = static_cast<double>(n - 1);
      r.iteration_s = (r.batches[n - 1].critical_end - r.batches[0].critical_end) / steps;
      r.compute_s /= steps;
      r.fetch_wait_s /= steps;
      r.sync_wait_s /= steps;
    }
  }
  return r;
}

}  // namespace actorrec::planner
