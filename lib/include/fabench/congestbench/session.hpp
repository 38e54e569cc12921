// A fabench-congest session on one rank (docs/design/congest.md): the roles every rank derives
// from the same flags (lib/congest), a World with one RC QP to every other rank, and the phase
// rank 0 asks for. A victim runs its ring test for a fixed number of iterations and returns
// its samples; a congestor runs its pattern's flows until the phase's window closes (loaded
// phases; it idles in isolated ones) and returns its operations. Every rank returns the
// deltas of its port's error and congestion counters over the phase.
//
// Phase parameters (world::Params): phase=isolated|loaded, round=R (the ring's order), seq=S
// (the phase's number, rising), window_ms=W. A loaded phase ends for the congestors when the
// lowest victim, told by every other victim that it is done, writes S into each congestor's
// stop flag; W bounds it should that write not come.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fabench/collbench/executor.hpp"
#include "fabench/congest/flows.hpp"
#include "fabench/congest/roles.hpp"
#include "fabench/ctrl/bootstrap.hpp"
#include "fabench/harness/context.hpp"
#include "fabench/world/driver.hpp"
#include "fabench/world/world.hpp"

namespace fabench::congestbench {

// GPCNeT's victim tests (victim.cpp). Latency and bandwidth over a random ring of the victims,
// each toward the ring successor: a sample depends on the path to the successor alone. The
// all-reduce over every victim at once (fabench-coll's executor, recursive doubling).
enum class VictimTest : std::uint8_t {
  kLatency,    // 8 B ping and pong with the successor: one sample (half the round trip) per round trip
  kBandwidth,  // 8 x 128 KiB writes with immediate to the successor, all acknowledged: one sample
  kAllReduce,  // an 8 B (2 x f32, sum) all-reduce of the victims: one sample (its time) per call
};

[[nodiscard]] std::string_view test_name(VictimTest t);  // "latency", "bandwidth", "allreduce"

struct CongestBench {
  VictimTest test = VictimTest::kLatency;
  congest::Pattern pattern = congest::Pattern::kIncast;
  std::uint32_t senders = 0;  // incast senders (--ratio N:1), 0: every other congestor

  // "congest/latency/incast" ("congest/bandwidth/incast-4:1" with --ratio).
  [[nodiscard]] std::string name() const;
};

struct SessionOptions {
  std::chrono::milliseconds timeout{30'000};
  std::uint32_t spin_before_yield = 0;
  std::uint8_t qp_timeout = world::kDefaultQpTimeout;
  congest::Roles roles;
  std::uint32_t target = 0;              // the incast target (a congestor)
  std::uint64_t congestor_bytes = 4096;  // per congestor operation
  std::uint32_t flow_window = 8;         // operations in flight per congestor flow
  std::uint64_t seed = 1;                // of the rings
  std::uint32_t ramp_ms = 50;            // loaded phases: victims start this long after go
  std::string device;                    // this rank's device and port, for the counters
  std::uint8_t port = 1;
};

// Sizes of the victim tests.
inline constexpr std::uint64_t kLatencyBytes = 8;
inline constexpr std::uint64_t kAllReduceFloats = 2;  // 8 B, GPCNeT's
inline constexpr std::uint64_t kBandwidthBytes = 128 * 1024;
inline constexpr std::uint32_t kBandwidthWindow = 8;

class Session final : public world::Job {
 public:
  Session(ctrl::Bootstrap& boot, const harness::Context& ctx, std::vector<CongestBench> benches,
          SessionOptions options);

  [[nodiscard]] const world::World& world() const noexcept { return *world_; }
  [[nodiscard]] const std::vector<CongestBench>& benches() const noexcept { return benches_; }

  void prepare(std::size_t bench, const world::Params& params) override;
  [[nodiscard]] world::RankReport run(std::uint64_t iterations, const world::Watch& watch) override;
  [[nodiscard]] std::string name(std::size_t bench) const override { return benches_.at(bench).name(); }

 private:
  void post_receives();

  ctrl::Bootstrap& boot_;
  std::vector<CongestBench> benches_;
  SessionOptions options_;
  std::unique_ptr<world::World> world_;
  std::unique_ptr<collbench::Executor> allreduce_;  // a victim's, built with the first all-reduce benchmark
  // The prepared phase.
  std::size_t bench_ = 0;
  bool loaded_ = false;
  std::uint32_t round_ = 0;
  std::uint64_t seq_ = 0;
  std::chrono::milliseconds window_{0};
};

// Arena layout: victims' landing region and source region, congestors' region (read source,
// write destination, send source and receive target alike: contents are not checked).
struct Layout {
  static constexpr std::uint64_t kLanding = 0;
  static constexpr std::uint64_t kSource = kBandwidthBytes * kBandwidthWindow;
  static constexpr std::uint64_t kCongest = 2 * kSource;
  // The stop flag (written by the lowest victim) and the value it writes from.
  [[nodiscard]] static std::uint64_t flag(std::uint64_t congestor_bytes) {
    return (kCongest + 2 * congestor_bytes + 63) / 64 * 64;
  }
  [[nodiscard]] static std::uint64_t arena_bytes(std::uint64_t congestor_bytes) { return flag(congestor_bytes) + 64; }
};

// One phase on one rank: what the loops return (victim.cpp, congestor.cpp).
struct PhaseResult {
  bool ok = true;
  std::string error;
  bool control_event = false;
  bool channel_closed = false;
  std::size_t channel_index = 0;
  std::vector<double> samples;  // victims: us one way per iteration (latency), GB/s (bandwidth), us per call
  std::uint64_t wrong = 0;      // all-reduce: output elements not equal to the exact sum
  double seconds = 0;           // the phase's loop
  std::uint64_t ops = 0;        // congestors: operations completed
  std::uint64_t bytes = 0;
};

// A phase as one rank runs it.
struct PhaseSpec {
  std::uint64_t seq = 0;  // the phase's number (the stop flag's value)
  bool loaded = false;
  std::uint32_t round = 0;              // the ring's order
  std::chrono::milliseconds ramp{0};    // victims, loaded: wait this long first
  std::chrono::milliseconds window{0};  // congestors: the longest they run
  std::uint64_t flag_offset = 0;        // Layout::flag()
};

// The victim test for `iterations` iterations (the all-reduce on `allreduce`, which every
// victim has); then, loaded, the lowest victim raises every congestor's stop flag.
[[nodiscard]] PhaseResult run_victim(const world::World& w, VictimTest test, const congest::Roles& roles,
                                     std::uint64_t seed, std::uint64_t iterations, const PhaseSpec& phase,
                                     const world::Watch& watch, collbench::Executor* allreduce);
// The victims' all-reduce (recursive doubling, kAllReduceFloats f32) as world rank `rank` (a
// victim; RunError otherwise) runs it: built for the victims' indices (Schedule::rank is the
// index), peers mapped to world ranks.
[[nodiscard]] coll::Schedule victims_allreduce(const congest::Roles& roles, std::uint32_t rank);
// A victim's all-reduce executor on that schedule, its input the victim's index + 1 in every
// element (the output, the sum over victims, is exact in f32).
[[nodiscard]] std::unique_ptr<collbench::Executor> make_allreduce(const world::World& w, const congest::Roles& roles);
// This congestor's flows of `flows` until its stop flag says phase.seq (or phase.window has
// passed), then its operations drained.
[[nodiscard]] PhaseResult run_congestor(const world::World& w, const std::vector<congest::Flow>& flows,
                                        std::uint64_t bytes, std::uint32_t window_ops, const PhaseSpec& phase,
                                        const world::Watch& watch);

}  // namespace fabench::congestbench
