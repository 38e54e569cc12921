// A fabench-kv session on one rank: the benchmarks every rank agreed on
// (KvBench list), the World they run in (prefill ranks [0, P) connected to
// decode ranks [P, P + D), every pair, `qps` lanes each), and the Transfer of
// the prepared benchmark. It is the world::Job of the session protocol
// (world/driver.hpp); rank 0 (leader.cpp) drives Google Benchmark.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fabench/ctrl/bootstrap.hpp"
#include "fabench/harness/context.hpp"
#include "fabench/kv/plan.hpp"
#include "fabench/kvbench/transfer.hpp"
#include "fabench/world/driver.hpp"
#include "fabench/world/prepared.hpp"
#include "fabench/world/world.hpp"

namespace fabench::kvbench {

enum class BenchKind : std::uint8_t {
  kTransfer,  // a model's KV cache in a layout: lib/kv's plan
  kSweep,     // the same bytes, contiguous, cut into WRs of wr_bytes with `sges` SGEs each
};

struct KvBench {
  kv::KvSpec spec;
  BenchKind kind = BenchKind::kTransfer;
  TransferOptions transfer;
  std::uint64_t wr_bytes = 0;  // sweep
  std::uint32_t sges = 1;      // sweep
  bool implied = false;        // a contiguous ceiling added so efficiency has its reference

  // "kv/llama-3.1-70b/layer/push/isl4096/tp1-1/frag0", "+unmerged", "+sge4", "+b8";
  // "wr/push/4096B/sge1/list1/sig16".
  [[nodiscard]] std::string name() const;
};

// The WRs of a benchmark, for every (prefill, decode) pair.
[[nodiscard]] std::vector<kv::PairPlan> plans_for(const KvBench& b);
// The plan `whole` (contiguous on both sides) cut into WRs of at most
// wr_bytes, each with its local bytes split into `sges` segments.
[[nodiscard]] kv::PairPlan resplit(const kv::PairPlan& whole, std::uint64_t wr_bytes, std::uint32_t sges);

struct SessionOptions {
  std::chrono::milliseconds timeout{30'000};
  std::uint32_t spin_before_yield = 0;
  std::uint32_t qps = 1;           // lanes per pair
  std::uint32_t send_depth = 256;  // WRs in flight per lane (clamped to the device)
  std::uint8_t qp_timeout = world::kDefaultQpTimeout;
};

class Session final : public world::Job {
 public:
  Session(ctrl::Bootstrap& boot, const harness::Context& ctx, std::vector<KvBench> benches,
          const SessionOptions& options);

  [[nodiscard]] ctrl::Bootstrap& boot() noexcept { return boot_; }
  [[nodiscard]] const std::vector<KvBench>& benches() const noexcept { return benches_; }
  [[nodiscard]] const world::World& world() const noexcept { return *world_; }
  [[nodiscard]] const SessionOptions& options() const noexcept { return options_; }

  void prepare(std::size_t bench, const world::Params& params) override;
  [[nodiscard]] world::RankReport run(std::uint64_t iterations, const world::Watch& watch) override;
  [[nodiscard]] std::string name(std::size_t bench) const override { return benches_.at(bench).name(); }

 private:
  ctrl::Bootstrap& boot_;
  const harness::Context& ctx_;
  std::vector<KvBench> benches_;
  SessionOptions options_;
  std::unique_ptr<world::World> world_;
  world::Prepared<Transfer> transfer_;
};

}  // namespace fabench::kvbench
