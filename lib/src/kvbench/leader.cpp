#include <algorithm>
#include <iostream>
#include <map>
#include <tuple>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "fabench/harness/stats.hpp"
#include "fabench/kvbench/roles.hpp"

namespace fabench::kvbench {

Combined combine(const std::vector<TransferResult>& ranks) {
  Combined c;
  for (const auto& r : ranks) {
    c.wrs += r.wrs;
    c.bytes += r.bytes;
    c.wrong_pages += r.wrong_pages;
    if (r.iteration_seconds.empty()) continue;
    if (c.iteration_seconds.size() < r.iteration_seconds.size()) c.iteration_seconds.resize(r.iteration_seconds.size());
    if (c.request_seconds.size() < r.request_seconds.size()) c.request_seconds.resize(r.request_seconds.size());
    for (std::size_t i = 0; i < r.iteration_seconds.size(); ++i)
      c.iteration_seconds[i] = std::max(c.iteration_seconds[i], r.iteration_seconds[i]);
    for (std::size_t i = 0; i < r.request_seconds.size(); ++i)
      c.request_seconds[i] = std::max(c.request_seconds[i], r.request_seconds[i]);
  }
  return c;
}

std::uint64_t knee(std::vector<std::pair<std::uint64_t, double>> points, double fraction) {
  double best = 0;
  for (const auto& p : points) best = std::max(best, p.second);
  std::sort(points.begin(), points.end());
  for (const auto& [bytes, rate] : points) {
    if (best > 0 && rate >= fraction * best) return bytes;
  }
  return 0;
}

namespace {

// What efficiency is measured against: the same transfer, contiguous.
using CeilingKey = std::tuple<std::string, kv::Direction, std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t>;
CeilingKey ceiling_key(const kv::KvSpec& s) {
  return {s.model.name, s.direction, s.isl, s.prefill_tp, s.decode_tp, s.batch};
}
// Sweep points that belong to one curve.
using SweepKey = std::tuple<kv::Direction, std::uint32_t, std::uint32_t, std::uint32_t>;

class Leader {
 public:
  Leader(Session& s, const LeaderOptions& o)
      : s_(s),
        o_(o),
        driver_(s.boot(), s,
                world::DriverOptions{"fabench-kv", s.options().timeout, s.options().spin_before_yield}) {}

  int run_all() {
    for (std::size_t i = 0; i < s_.benches().size(); ++i) {
      harness::register_fabric_benchmark(
          s_.benches()[i].name(), [this, i](benchmark::State& st) { bench(st, i); }, o_.registration);
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    driver_.finish();
    print_knees();
    if (failures_ > 0) {
      std::cerr << fmt::format("fabench-kv: {} benchmark run(s) failed{}\n", failures_,
                               driver_.broken() ? ": " + driver_.broken_reason() : std::string());
      return 1;
    }
    return 0;
  }

 private:
  void bench(benchmark::State& state, std::size_t index) {
    const auto n = static_cast<std::uint64_t>(state.max_iterations);
    Combined c;
    while (state.KeepRunningBatch(static_cast<benchmark::IterationCount>(n))) {
      const auto out = driver_.run(index, n);
      if (!out.ok) {
        ++failures_;
        state.SkipWithError(out.error.c_str());
        return;
      }
      std::vector<TransferResult> ranks;
      for (const auto& r : out.ranks) ranks.push_back(TransferResult::from_report(r));
      for (const auto& r : ranks) {
        if (!r.ok) {
          ++failures_;
          state.SkipWithError(r.error.c_str());
          return;
        }
      }
      c = combine(ranks);
      double total = 0;
      for (const auto t : c.iteration_seconds) total += t;
      state.SetIterationTime(total);
    }
    report(state, index, c);
  }

  void report(benchmark::State& state, std::size_t index, Combined& c) {
    const KvBench& b = s_.benches()[index];
    const auto n = static_cast<double>(c.iteration_seconds.size());
    double total = 0;
    for (const auto t : c.iteration_seconds) total += t;
    const auto req = harness::compute_stats_in_place(c.request_seconds);
    const double gbps = total > 0 ? static_cast<double>(c.bytes) * n / total / 1e9 : 0;
    const double batch = b.spec.batch;
    state.counters["p50_us"] = req.p50 * 1e6;
    state.counters["p99_us"] = req.p99 * 1e6;
    state.counters["max_us"] = req.max * 1e6;
    state.counters["GBps"] = gbps;
    state.counters["bytes_per_request"] = static_cast<double>(c.bytes) / batch;
    state.counters["wrs_per_request"] = static_cast<double>(c.wrs) / batch;
    state.counters["wr_rate"] = total > 0 ? static_cast<double>(c.wrs) * n / total : 0;
    state.counters["wrong"] = static_cast<double>(c.wrong_pages);
    state.counters["predicted_us"] =
        kv::predict_seconds(c.bytes, c.wrs, o_.link_bytes_per_s, o_.wr_cost_s) * 1e6;
    state.SetBytesProcessed(static_cast<std::int64_t>(c.bytes) * static_cast<std::int64_t>(n));
    if (b.kind == BenchKind::kSweep) {
      state.counters["wr_bytes"] = static_cast<double>(b.wr_bytes);
      state.counters["sges"] = b.sges;
      sweep_[{b.spec.direction, b.sges, b.transfer.post_list, b.transfer.signal_every}][b.wr_bytes] = gbps;
    } else if (b.spec.layout == kv::Layout::kContiguous && b.spec.max_sge == 1) {
      ceiling_[ceiling_key(b.spec)] = gbps;
      state.counters["efficiency"] = 1.0;
    } else if (const auto it = ceiling_.find(ceiling_key(b.spec)); it != ceiling_.end() && it->second > 0) {
      state.counters["efficiency"] = gbps / it->second;
    }
    const double prefill_s = o_.ttft_s ? *o_.ttft_s
                             : o_.prefill_tokens_per_s ? b.spec.isl / *o_.prefill_tokens_per_s
                                                       : 0.0;
    if (prefill_s > 0) state.counters["ttft_share"] = req.p50 / prefill_s;
    if (b.implied) state.SetLabel("ceiling for efficiency");
    if (c.wrong_pages > 0) {
      ++failures_;
      state.SkipWithError(fmt::format("{} page(s) arrived wrong", c.wrong_pages).c_str());
    }
  }

  void print_knees() const {
    for (const auto& [key, curve] : sweep_) {
      const auto& [dir, sges, list, sig] = key;
      const std::vector<std::pair<std::uint64_t, double>> points(curve.begin(), curve.end());
      double best = 0;
      for (const auto& p : points) best = std::max(best, p.second);
      std::cerr << fmt::format(
          "fabench-kv: WR sweep ({}, {} SGE, post list {}, signal every {}): best {:.3f} GB/s (G = 1e9); "
          "50 % of it from {} B per WR, 90 % from {} B per WR\n",
          kv::direction_name(dir), sges, list, sig, best, knee(points, 0.5), knee(points, 0.9));
    }
  }

  Session& s_;
  LeaderOptions o_;
  world::Leader driver_;
  int failures_ = 0;
  std::map<CeilingKey, double> ceiling_;
  std::map<SweepKey, std::map<std::uint64_t, double>> sweep_;  // GB/s by bytes per WR
};

}  // namespace

int lead(Session& session, const LeaderOptions& options) { return Leader(session, options).run_all(); }

int follow(Session& session) {
  return world::follow(session.boot(), session,
                       world::DriverOptions{"fabench-kv", session.options().timeout,
                                            session.options().spin_before_yield});
}

}  // namespace fabench::kvbench
