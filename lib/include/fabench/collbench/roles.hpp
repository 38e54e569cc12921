// fabench-coll as a job of the N-rank skeleton (world/job_app.hpp): its flags and benchmarks
// (app.cpp), its Session on every rank (session.hpp), and rank 0's per-benchmark run and
// counters (leader.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "fabench/collbench/cli.hpp"
#include "fabench/collbench/session.hpp"
#include "fabench/world/job_app.hpp"

namespace fabench::collbench {

class CollJob final : public world::CliBenchmarkJob<Cli> {
 public:
  [[nodiscard]] Text text() const override;
  [[nodiscard]] std::optional<int> before_launch(CLI::App& app) override;
  // The shared-memory transport opens no device.
  [[nodiscard]] bool uses_device() const override { return transport_ != TransportKind::kShm; }
  [[nodiscard]] std::unique_ptr<world::Job> set_up(const world::Rank& rank) override;

 private:
  void begin(const world::Rank& rank) override;
  [[nodiscard]] std::vector<std::string> names() const override;
  void bench(benchmark::State& state, std::size_t index, world::Leader& driver) override;
  // --algo auto: the best algorithm measured in this run at the same collective, type and
  // size when all were measured, else the cost model's pick. Returns the label.
  std::string resolve_auto(std::size_t index);
  void report(benchmark::State& state, std::size_t index, std::uint64_t n, const std::vector<RankResult>& ranks,
              std::string label);

  std::vector<CollSpec> specs_;
  TransportKind transport_ = TransportKind::kRdma;
  Session* session_ = nullptr;  // set_up's, owned by the skeleton
  bool measured_auto_ = true;   // --algo auto picks the best measured algorithm when all were measured
  std::set<std::size_t> warmed_;
  std::map<std::tuple<coll::Collective, coll::DType, std::uint64_t, coll::Algorithm>, double> measured_;
};

}  // namespace fabench::collbench
