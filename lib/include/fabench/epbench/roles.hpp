// fabench-ep as a job of the N-rank skeleton (world/job_app.hpp): its flags and benchmarks
// (app.cpp), its Session on every rank (session.hpp), and rank 0's per-benchmark run and
// counters (leader.cpp).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fabench/epbench/cli.hpp"
#include "fabench/epbench/session.hpp"
#include "fabench/world/job_app.hpp"

namespace fabench::epbench {

// Every call's dispatch and combine time of the slowest rank, and the checks of every rank.
struct Calls {
  std::vector<double> dispatch_s, combine_s;  // per call, the slowest rank
  std::uint64_t bad_copies = 0, bad_tokens = 0;
};

class EpJob final : public world::CliBenchmarkJob<Cli> {
 public:
  [[nodiscard]] Text text() const override;
  // --plan prints the plan and ends the run; else the benchmarks.
  [[nodiscard]] std::optional<int> before_launch(CLI::App& app) override;
  [[nodiscard]] std::unique_ptr<world::Job> set_up(const world::Rank& rank) override;

 private:
  void begin(const world::Rank& rank) override;
  [[nodiscard]] std::vector<std::string> names() const override;
  void bench(benchmark::State& state, std::size_t index, world::Leader& driver) override;
  void report(benchmark::State& state, std::size_t index, Calls& c);

  std::vector<EpBench> benches_;
  Session* session_ = nullptr;   // set_up's, owned by the skeleton
  double link_bytes_per_s_ = 0;  // for predicted_us (the port's rate)
  double wr_cost_s_ = 0;         // per posted WR
  double round_s_ = 0;           // per protocol round
};

}  // namespace fabench::epbench
