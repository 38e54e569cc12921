// A fabench-ep session on one rank: the benchmarks every rank agreed on (EpBench list), their
// plans (every rank routes every rank's tokens alike, so each knows every count and offset),
// the World (one RC QP to every other rank, one arena sized for the largest plan) and the
// Engine of the prepared benchmark. It is the world::Job of the session protocol
// (world/driver.hpp); rank 0 (leader.cpp) drives Google Benchmark.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fabench/ctrl/bootstrap.hpp"
#include "fabench/ep/plan.hpp"
#include "fabench/ep/routing.hpp"
#include "fabench/epbench/engine.hpp"
#include "fabench/harness/context.hpp"
#include "fabench/world/driver.hpp"
#include "fabench/world/prepared.hpp"
#include "fabench/world/world.hpp"

namespace fabench::epbench {

struct EpBench {
  ep::EpConfig config;  // ranks: the session's
  ep::Skew skew;
  std::string routing_file;  // replayed instead of drawn when set
  std::uint64_t seed = 1;
  bool reference = false;  // dispatch as write + notify (engine.hpp), named ".../ref-write"

  // "ep/deepseek-v3/normal/fp8/t4096/uniform" (skew: "hot-rank:4", "zipf:1.2", "replay").
  [[nodiscard]] std::string name() const;
  // The router of this benchmark (user errors for a skew or file that does not fit).
  [[nodiscard]] ep::Router router() const;
};

struct SessionOptions {
  std::chrono::milliseconds timeout{30'000};
  std::uint32_t spin_before_yield = 0;
  std::uint8_t qp_timeout = world::kDefaultQpTimeout;
};

class Session final : public world::Job {
 public:
  Session(ctrl::Bootstrap& boot, const harness::Context& ctx, std::vector<EpBench> benches,
          const SessionOptions& options);

  [[nodiscard]] ctrl::Bootstrap& boot() noexcept { return boot_; }
  [[nodiscard]] const std::vector<EpBench>& benches() const noexcept { return benches_; }
  [[nodiscard]] const ep::EpPlan& plan(std::size_t bench) const { return plans_.at(bench); }
  [[nodiscard]] const world::World& world() const noexcept { return *world_; }
  [[nodiscard]] const SessionOptions& options() const noexcept { return options_; }

  void prepare(std::size_t bench, const world::Params& params) override;
  [[nodiscard]] world::RankReport run(std::uint64_t iterations, const world::Watch& watch) override;
  [[nodiscard]] std::string name(std::size_t bench) const override { return benches_.at(bench).name(); }

 private:
  void post_receives();

  ctrl::Bootstrap& boot_;
  std::vector<EpBench> benches_;
  std::vector<ep::EpPlan> plans_;
  SessionOptions options_;
  std::unique_ptr<world::World> world_;
  world::Prepared<Engine> engine_;
};

}  // namespace fabench::epbench
