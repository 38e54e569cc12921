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

CeilingKey ceiling_key(const kv::KvSpec& s) {
  return {s.model.name, s.direction, s.isl, s.prefill_tp, s.decode_tp, s.batch};
}

}  // namespace

void KvJob::bench(benchmark::State& state, std::size_t index, world::Leader& driver) {
  Combined c;
  const bool ok = batches(state, driver, index, {}, [&](const world::Outcome& out, std::string& error) {
    std::vector<TransferResult> ranks;
    for (const auto& r : out.ranks) ranks.push_back(TransferResult::from_report(r));
    for (const auto& r : ranks) {
      if (!r.ok) {
        error = r.error;
        return std::optional<double>();
      }
    }
    c = combine(ranks);
    double total = 0;
    for (const auto t : c.iteration_seconds) total += t;
    return std::optional<double>(total);
  });
  if (ok) report(state, index, c);
}

void KvJob::report(benchmark::State& state, std::size_t index, Combined& c) {
  const KvBench& b = benches_[index];
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
  state.counters["predicted_us"] = kv::predict_seconds(c.bytes, c.wrs, link_bytes_per_s_, wr_cost_s_) * 1e6;
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
  const double prefill_s = ttft_s_ ? *ttft_s_ : prefill_tokens_per_s_ ? b.spec.isl / *prefill_tokens_per_s_ : 0.0;
  if (prefill_s > 0) state.counters["ttft_share"] = req.p50 / prefill_s;
  if (b.implied) state.SetLabel("ceiling for efficiency");
  if (c.wrong_pages > 0) fail(state, fmt::format("{} page(s) arrived wrong", c.wrong_pages));
}

void KvJob::end() {
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

}  // namespace fabench::kvbench
