#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <set>
#include <tuple>

#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fabench/collbench/roles.hpp"

namespace fabench::collbench {

void CollJob::bench(benchmark::State& state, std::size_t index, world::Leader& driver) {
  const auto n = static_cast<std::uint64_t>(state.max_iterations);
  std::string label = resolve_auto(index);
  const world::Params params{{"algo", std::string(coll::algorithm_name(session_->specs()[index].algorithm))}};
  // Untimed calls first, once per benchmark (nccl-tests' -w). Calls alternate between two
  // sets of output and scratch buffers; over shared memory the first call on each set ran 10
  // to 40 times slower than later ones (2 ranks, 1-64 MiB; page faults ruled out), so the
  // default of 2 touches both before anything is timed.
  if (c_.warmup > 0 && warmed_.insert(index).second) {
    const auto w = driver.run(index, c_.warmup, params);
    if (!w.ok) return fail(state, "warm-up: " + w.error);
  }
  std::vector<RankResult> ranks;
  const bool ok = batches(state, driver, index, params, [&](const world::Outcome& o, std::string& error) {
    ranks.clear();
    double t_max = 0;
    for (std::size_t i = 0; i < o.ranks.size(); ++i) {
      ranks.push_back(RankResult::from_report(o.ranks[i]));
      // A result whose record does not read (a field missing) fails the run, naming the rank.
      if (!ranks.back().ok) {
        error = fmt::format("rank {}: {}", i, ranks.back().error);
        return std::optional<double>();
      }
      t_max = std::max(t_max, ranks.back().seconds);
    }
    return std::optional<double>(t_max);
  });
  if (ok) report(state, index, n, ranks, label);
}

// --algo auto: the best measured, else the cost model's pick (roles.hpp). The spec of every
// rank's session takes the pick through the run's "algo" parameter.
std::string CollJob::resolve_auto(std::size_t index) {
  CollSpec& spec = session_->spec(index);
  Session& s_ = *session_;
  const std::uint32_t n_ = s_.boot().size();
  if (!spec.is_auto) return {};
  const auto candidates = coll::algorithms_for(spec.collective);
  double best = 0;
  std::optional<coll::Algorithm> pick;
  bool all = measured_auto_;
  for (const auto a : candidates) {
    const auto it = measured_.find({spec.collective, spec.dtype, spec.bytes, a});
    if (it == measured_.end()) {
      all = false;
      continue;
    }
    if (!pick || it->second < best) {
      best = it->second;
      pick = a;
    }
  }
  const char* how = "measured";
  if (!all || !pick) {
    // Gamma (and, over shared memory, beta) at the sizes of the ring's schedule at this size.
    CollSpec ring = spec;
    ring.algorithm = coll::Algorithm::kRing;
    const auto sched = schedule_for(ring, n_, 0, s_.options().pipeline_chunks);
    pick = coll::choose_auto(spec.collective, n_, spec.bytes, s_.options().cost_for(spec.dtype, spec.compute, sched));
    how = "model";
  }
  spec.algorithm = *pick;
  return fmt::format("auto: {} ({})", coll::algorithm_name(*pick), how);
}

void CollJob::report(benchmark::State& state, std::size_t index, std::uint64_t n, const std::vector<RankResult>& ranks,
                     std::string label) {
  Session& s_ = *session_;
  const CollSpec& spec = s_.specs()[index];
  const std::uint32_t n_ = s_.boot().size();
  double t_max = 0;
  double t_min = 1e300;
  std::uint64_t wrong = 0;
  std::uint64_t wire = 0;
  std::uint32_t differ = 0;
  for (const auto& r : ranks) {
    t_max = std::max(t_max, r.seconds);
    t_min = std::min(t_min, r.seconds);
    wrong += r.wrong;
    wire = std::max(wire, r.wire_bytes);
    differ += r.hash != ranks[0].hash ? 1 : 0;
  }
  const bool same_everywhere = spec.collective == coll::Collective::kAllReduce ||
                               spec.collective == coll::Collective::kAllGather;
  if (!same_everywhere) differ = 0;
  const auto& sched = s_.current()->schedule();
  const double per_op = t_max / static_cast<double>(n);
  const auto logical = coll::logical_bytes(spec.collective, sched.count, coll::dtype_size(spec.dtype), n_);
  const double algbw = per_op > 0 ? static_cast<double>(logical) / per_op / 1e9 : 0;
  state.counters["time_max_us"] = per_op * 1e6;
  state.counters["time_min_us"] = t_min / static_cast<double>(n) * 1e6;
  state.counters["algbw_GBps"] = algbw;
  state.counters["busbw_GBps"] = algbw * coll::bus_factor(spec.collective, n_);
  state.counters["logical_bytes"] = static_cast<double>(logical);
  state.counters["wire_bytes"] = static_cast<double>(wire);
  // The model's alpha, beta and gamma terms, plus this schedule's own copies at the calibrated rate.
  const auto& so = s_.options();
  state.counters["predicted_us"] = (coll::predict_seconds(spec.collective, spec.algorithm, n_, logical,
                                                          so.cost_for(spec.dtype, spec.compute, sched)) +
                                    so.copies_seconds(spec.compute, sched)) *
                                   1e6;
  // Where the time went, per call on the slowest rank: local reductions and copies, and the
  // rest (posting writes and waiting for the wire).
  double ops_max = 0;
  double wait_max = 0;
  for (const auto& r : ranks) {
    ops_max = std::max(ops_max, r.ops_seconds);
    wait_max = std::max(wait_max, r.seconds - r.ops_seconds);
  }
  state.counters["reduce_us"] = ops_max / static_cast<double>(n) * 1e6;
  state.counters["wait_us"] = wait_max / static_cast<double>(n) * 1e6;
  state.counters["ranks"] = n_;
  state.counters["pipeline_chunks"] = sched.pipeline_chunks;
  if (spec.compute) {
    state.counters["wrong"] = static_cast<double>(wrong + differ);
  } else {
    label += std::string(label.empty() ? "" : "; ") + "compute none: output not checked";
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(logical) * static_cast<std::int64_t>(n));
  if (!label.empty()) state.SetLabel(label);
  if (!spec.is_auto) measured_[{spec.collective, spec.dtype, spec.bytes, spec.algorithm}] = per_op;
  if (wrong + differ > 0) {
    fail(state, fmt::format("{} wrong elements, {} rank(s) with an output unlike rank 0's", wrong, differ));
  }
}

}  // namespace fabench::collbench
