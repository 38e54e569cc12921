// Rank 0 of fabench-ep: per benchmark, every call's dispatch and combine time is the slowest
// rank's; the counters are the p50/p99 of those over the calls, the bytes and copies of the plan
// (which the run moves exactly: engine.hpp) and the prediction at the link rate.
#include <algorithm>
#include <iostream>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "fabench/epbench/roles.hpp"
#include "fabench/harness/stats.hpp"

namespace fabench::epbench {

namespace {

// The slowest rank per call; false (and error) when a rank's record is short.
bool merge(const world::Outcome& out, Calls& c, std::string& error) {
  c = {};
  for (std::size_t r = 0; r < out.ranks.size(); ++r) {
    const auto& rec = out.ranks[r].record;
    const auto& d = rec.list("dispatch_s");
    const auto& m = rec.list("combine_s");
    if (c.dispatch_s.empty()) {
      c.dispatch_s.assign(d.size(), 0.0);
      c.combine_s.assign(m.size(), 0.0);
    }
    if (d.size() != c.dispatch_s.size() || m.size() != c.combine_s.size()) {
      error = fmt::format("rank {} reported {} calls, rank 0 {}", r, d.size(), c.dispatch_s.size());
      return false;
    }
    for (std::size_t i = 0; i < d.size(); ++i) {
      c.dispatch_s[i] = std::max(c.dispatch_s[i], d[i]);
      c.combine_s[i] = std::max(c.combine_s[i], m[i]);
    }
    c.bad_copies += rec.u64("bad_copies");
    c.bad_tokens += rec.u64("bad_tokens");
  }
  return true;
}

}  // namespace

void EpJob::bench(benchmark::State& state, std::size_t index, world::Leader& driver) {
  Calls c;
  const bool ok = batches(state, driver, index, {}, [&c](const world::Outcome& out, std::string& error) {
    if (!merge(out, c, error)) return std::optional<double>();
    double total = 0;
    for (std::size_t i = 0; i < c.dispatch_s.size(); ++i) total += c.dispatch_s[i] + c.combine_s[i];
    return std::optional<double>(total);
  });
  if (ok) report(state, index, c);
}

void EpJob::report(benchmark::State& state, std::size_t index, Calls& c) {
  const ep::EpPlan& p = session_->plan(index);
  const auto d = harness::compute_stats_in_place(c.dispatch_s);
  const auto m = harness::compute_stats_in_place(c.combine_s);
  std::uint64_t fabric = 0, wire = 0, combine_fabric = 0;
  for (const auto& r : p.ranks) {
    fabric += r.dispatch_sent.fabric;
    wire += r.dispatch_sent.fabric + r.header_bytes;
    combine_fabric += r.combine_sent.fabric;
  }
  const double ranks = p.ranks.size();
  state.counters["dispatch_us"] = d.p50 * 1e6;
  state.counters["dispatch_p99_us"] = d.p99 * 1e6;
  state.counters["combine_us"] = m.p50 * 1e6;
  state.counters["combine_p99_us"] = m.p99 * 1e6;
  state.counters["dispatch_GBps"] = d.p50 > 0 ? static_cast<double>(fabric) / ranks / d.p50 / 1e9 : 0;
  state.counters["combine_GBps"] = m.p50 > 0 ? static_cast<double>(combine_fabric) / ranks / m.p50 / 1e9 : 0;
  state.counters["recv_tokens_max"] = p.recv_copies_max();
  state.counters["recv_tokens_mean"] = p.recv_copies_mean();
  state.counters["logical_bytes"] = static_cast<double>(fabric);
  state.counters["wire_bytes"] = static_cast<double>(wire);
  const auto pr = ep::predict(p, link_bytes_per_s_, wr_cost_s_, round_s_);
  state.counters["predicted_us"] = (pr.dispatch_s + pr.combine_s) * 1e6;
  state.counters["wrong"] = static_cast<double>(c.bad_copies + c.bad_tokens);
  if (c.bad_copies + c.bad_tokens > 0) {
    fail(state, fmt::format("{} dispatched copies and {} combined tokens arrived wrong", c.bad_copies, c.bad_tokens));
  }
}

}  // namespace fabench::epbench
