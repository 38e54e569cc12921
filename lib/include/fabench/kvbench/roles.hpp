// fabench-kv as a job of the N-rank skeleton (world/job_app.hpp): its flags and benchmarks
// (app.cpp), its Session on every rank (session.hpp), and rank 0's per-benchmark run and
// counters (leader.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "fabench/kvbench/cli.hpp"
#include "fabench/kvbench/session.hpp"
#include "fabench/world/job_app.hpp"

namespace fabench::kvbench {

// What every rank measured in one run, combined: per iteration and per
// request the slowest initiator (a request is whole when its last rank is).
struct Combined {
  std::vector<double> iteration_seconds;  // n
  std::vector<double> request_seconds;    // n x batch
  std::uint64_t wrs = 0;                  // per iteration, all ranks
  std::uint64_t bytes = 0;                // per iteration, all ranks
  std::uint64_t wrong_pages = 0;
};
[[nodiscard]] Combined combine(const std::vector<TransferResult>& ranks);

// Bytes per WR at which the sweep first reaches `fraction` of its best rate;
// 0 when it never does. `points` are (bytes per WR, GB/s), any order.
[[nodiscard]] std::uint64_t knee(std::vector<std::pair<std::uint64_t, double>> points, double fraction);

// What efficiency is measured against: the same transfer, contiguous.
using CeilingKey = std::tuple<std::string, kv::Direction, std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t>;
// Sweep points that belong to one curve.
using SweepKey = std::tuple<kv::Direction, std::uint32_t, std::uint32_t, std::uint32_t>;

class KvJob final : public world::CliBenchmarkJob<Cli> {
 public:
  [[nodiscard]] Text text() const override;
  // --plan prints (or writes) the plans and ends the run; else the benchmarks.
  [[nodiscard]] std::optional<int> before_launch(CLI::App& app) override;
  // prefill TP + decode TP ranks.
  void check_size(const ctrl::Bootstrap& boot) const override;
  [[nodiscard]] std::unique_ptr<world::Job> set_up(const world::Rank& rank) override;

 private:
  void begin(const world::Rank& rank) override;
  [[nodiscard]] std::vector<std::string> names() const override;
  void bench(benchmark::State& state, std::size_t index, world::Leader& driver) override;
  void report(benchmark::State& state, std::size_t index, Combined& c);
  void end() override;  // the sweep's knees

  std::vector<KvBench> benches_;
  Session* session_ = nullptr;                  // set_up's, owned by the skeleton
  double link_bytes_per_s_ = 0;                 // for predicted_us (the port's rate)
  double wr_cost_s_ = 0;                        // per posted WR, for predicted_us
  std::optional<double> prefill_tokens_per_s_;  // --prefill-tps: a request prefills in isl / tps
  std::optional<double> ttft_s_;                // --ttft-ms
  std::map<CeilingKey, double> ceiling_;
  std::map<SweepKey, std::map<std::uint64_t, double>> sweep_;  // GB/s by bytes per WR
};

}  // namespace fabench::kvbench
