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

namespace {

// Every rank's result of one run, parsed.
struct Outcome {
  bool ok = true;
  std::string error;
  std::vector<RankResult> ranks;
};

class Leader {
 public:
  Leader(Session& s, const LeaderOptions& o)
      : s_(s),
        o_(o),
        n_(s.boot().size()),
        driver_(s.boot(), s,
                world::DriverOptions{"fabench-coll", s.options().timeout, s.options().spin_before_yield}) {}

  int run_all() {
    for (std::size_t i = 0; i < s_.specs().size(); ++i) {
      harness::register_fabric_benchmark(
          s_.specs()[i].name(), [this, i](benchmark::State& st) { bench(st, i); }, o_.registration);
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    driver_.finish();
    if (failures_ > 0) {
      std::cerr << fmt::format("fabench-coll: {} benchmark run(s) failed{}\n", failures_,
                               driver_.broken() ? ": " + driver_.broken_reason() : std::string());
      return 1;
    }
    return 0;
  }

 private:
  void bench(benchmark::State& state, std::size_t index) {
    if (driver_.broken()) {
      ++failures_;
      state.SkipWithError(("not run: " + driver_.broken_reason()).c_str());
      return;
    }
    const auto n = static_cast<std::uint64_t>(state.max_iterations);
    std::string label = resolve_auto(index);
    const std::string algo(coll::algorithm_name(s_.specs()[index].algorithm));
    Outcome out;
    // Untimed calls first, once per benchmark (nccl-tests' -w). Calls alternate between two
    // sets of output and scratch buffers; over shared memory the first call on each set ran 10
    // to 40 times slower than later ones (2 ranks, 1-64 MiB; page faults ruled out), so the
    // default of 2 touches both before anything is timed.
    if (o_.warmup_calls > 0 && warmed_.insert(index).second) {
      const auto w = driver_.run(index, o_.warmup_calls, {{"algo", algo}});
      if (!w.ok) {
        ++failures_;
        state.SkipWithError(("warm-up: " + w.error).c_str());
        return;
      }
    }
    while (state.KeepRunningBatch(static_cast<benchmark::IterationCount>(n))) {
      const auto o = driver_.run(index, n, {{"algo", algo}});
      out.ok = o.ok;
      out.error = o.error;
      out.ranks.clear();
      for (std::size_t i = 0; i < o.ranks.size(); ++i) {
        out.ranks.push_back(RankResult::from_report(o.ranks[i]));
        // A result whose record does not read (a field missing) fails the run, naming the rank.
        if (out.ok && !out.ranks.back().ok) {
          out.ok = false;
          out.error = fmt::format("rank {}: {}", i, out.ranks.back().error);
        }
      }
      if (!out.ok) break;
      double t_max = 0;
      for (const auto& r : out.ranks) t_max = std::max(t_max, r.seconds);
      state.SetIterationTime(t_max);
    }
    if (!out.ok) {
      ++failures_;
      state.SkipWithError(out.error.c_str());
      return;
    }
    report(state, index, n, out, label);
  }

  // --algo auto: the best algorithm measured in this run at the same
  // collective, type and size when all were measured, else the cost model's pick.
  std::string resolve_auto(std::size_t index) {
    CollSpec& spec = s_.spec(index);
    if (!spec.is_auto) return {};
    const auto candidates = coll::algorithms_for(spec.collective);
    double best = 0;
    std::optional<coll::Algorithm> pick;
    bool all = o_.measured_auto;
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

  void report(benchmark::State& state, std::size_t index, std::uint64_t n, const Outcome& out, std::string label) {
    const CollSpec& spec = s_.specs()[index];
    double t_max = 0;
    double t_min = 1e300;
    std::uint64_t wrong = 0;
    std::uint64_t wire = 0;
    std::uint32_t differ = 0;
    for (const auto& r : out.ranks) {
      t_max = std::max(t_max, r.seconds);
      t_min = std::min(t_min, r.seconds);
      wrong += r.wrong;
      wire = std::max(wire, r.wire_bytes);
      differ += r.hash != out.ranks[0].hash ? 1 : 0;
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
    for (const auto& r : out.ranks) {
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
      ++failures_;
      state.SkipWithError(
          fmt::format("{} wrong elements, {} rank(s) with an output unlike rank 0's", wrong, differ).c_str());
    }
  }

  Session& s_;
  LeaderOptions o_;
  std::uint32_t n_;
  world::Leader driver_;
  int failures_ = 0;
  std::set<std::size_t> warmed_;
  std::map<std::tuple<coll::Collective, coll::DType, std::uint64_t, coll::Algorithm>, double> measured_;
};

}  // namespace

int lead(Session& session, const LeaderOptions& options) { return Leader(session, options).run_all(); }

}  // namespace fabench::collbench
