// A fabench-coll session on one rank: the benchmarks every rank agreed on
// (CollSpec list), the World they run in, and per benchmark an Executor with
// its input filled and its expected output computed, so a run is "n calls,
// then check". It is the world::Job of the session protocol
// (world/driver.hpp): rank 0 (leader.cpp) drives Google Benchmark and tells
// the others what to run. A run reports {seconds, wrong, hash, wire_bytes,
// ops_seconds} (RankResult), by name on the wire (ctrl::Record). The transport is RDMA (a World on a
// device) or shared memory (a ShmWorld: every rank on one host, no device).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fabench/coll/cost.hpp"
#include "fabench/coll/data.hpp"
#include "fabench/coll/schedule.hpp"
#include "fabench/collbench/executor.hpp"
#include "fabench/ctrl/bootstrap.hpp"
#include "fabench/harness/context.hpp"
#include "fabench/world/driver.hpp"
#include "fabench/world/result.hpp"
#include "fabench/world/shm.hpp"
#include "fabench/world/world.hpp"

namespace fabench::collbench {

struct CollSpec {
  coll::Collective collective = coll::Collective::kAllReduce;
  coll::Algorithm algorithm = coll::Algorithm::kRing;
  bool is_auto = false;  // --algo auto: `algorithm` is chosen when it first runs
  coll::DType dtype = coll::DType::kF32;
  coll::ReduceOp op = coll::ReduceOp::kSum;
  std::uint64_t bytes = 0;  // S as asked (the full buffer)
  bool compute = true;      // false (--compute none): reductions and copies skipped, output not checked

  [[nodiscard]] std::uint64_t count() const { return bytes / coll::dtype_size(dtype); }
  // "allreduce/ring/f32/1048576", "allreduce/auto/f32/1048576", ".../compute:none"
  [[nodiscard]] std::string name() const;
};

enum class TransportKind : std::uint8_t { kRdma, kShm };

struct SessionOptions {
  TransportKind transport = TransportKind::kRdma;
  std::uint32_t reduce_threads = 1;  // threads for the local reductions and copies (ReducePool)
  std::chrono::milliseconds timeout{30'000};
  std::uint32_t spin_before_yield = 0;
  std::uint32_t pipeline_chunks = 0;  // ring sub-chunks; 0: auto_pipeline_chunks per size
  std::uint8_t qp_timeout = world::kDefaultQpTimeout;
  coll::CostParams cost;  // alpha and beta for predictions and --algo auto without measurements
  coll::HostRates rates;  // gamma per dtype and the copy rate, by size (rank 0 calibrates them)

  // The size the calibrated rates are read at for `sched`: half its arena (coll::HostRates).
  [[nodiscard]] static std::uint64_t footprint_bytes(const coll::Schedule& sched);
  // cost with the gamma of dtype t (0 when nothing is computed) and, over shared memory, beta at
  // the copy rate, both at footprint_bytes(sched).
  [[nodiscard]] coll::CostParams cost_for(coll::DType t, bool compute, const coll::Schedule& sched) const;
  // Seconds of `sched`'s own local copies at the calibrated copy rate at footprint_bytes(sched)
  // (0 when nothing is computed).
  [[nodiscard]] double copies_seconds(bool compute, const coll::Schedule& sched) const;
};

// What one rank reports for one run.
struct RankResult {
  bool ok = true;
  std::string error;
  double seconds = 0;
  std::uint64_t wrong = 0;
  std::uint64_t hash = 0;
  std::uint64_t wire_bytes = 0;  // per call
  double ops_seconds = 0;        // of `seconds`, in local reductions and copies
  int closed_channel = -1;       // index into Watch::channels of one found closed mid-run

  // The numbers by name: seconds, ops_seconds (f64); wrong, hash, wire_bytes (u64, exact).
  // from_record throws ctrl::RecordError naming a field that is missing or of another kind.
  static constexpr auto record_fields() {
    return std::tuple{ctrl::RecordField{"seconds", &RankResult::seconds},
                      ctrl::RecordField{"wrong", &RankResult::wrong}, ctrl::RecordField{"hash", &RankResult::hash},
                      ctrl::RecordField{"wire_bytes", &RankResult::wire_bytes},
                      ctrl::RecordField{"ops_seconds", &RankResult::ops_seconds}};
  }
  [[nodiscard]] ctrl::Record to_record() const { return ctrl::write_fields(*this); }
  [[nodiscard]] static RankResult from_record(const ctrl::Record& r) { return ctrl::read_fields<RankResult>(r); }
  [[nodiscard]] world::RankReport to_report() const { return world::report_of(*this); }
  // A report whose record does not read is a failed rank, the error naming the field.
  [[nodiscard]] static RankResult from_report(const world::RankReport& r) { return world::result_of<RankResult>(r); }
};

class Session final : public world::Job {
 public:
  // ctx: the device (RDMA); nullptr for the shared-memory transport.
  Session(ctrl::Bootstrap& boot, const harness::Context* ctx, std::vector<CollSpec> specs,
          const SessionOptions& options);

  [[nodiscard]] ctrl::Bootstrap& boot() noexcept { return boot_; }
  [[nodiscard]] const std::vector<CollSpec>& specs() const noexcept { return specs_; }
  [[nodiscard]] CollSpec& spec(std::size_t i) { return specs_.at(i); }
  [[nodiscard]] std::size_t peer_count() const noexcept;
  [[nodiscard]] std::uint64_t arena_bytes() const noexcept;
  [[nodiscard]] const SessionOptions& options() const noexcept { return options_; }
  // Rank 0's cost model, once calibrated (SessionOptions::cost, rates).
  void set_cost_model(const coll::CostParams& cost, const coll::HostRates& rates) {
    options_.cost = cost;
    options_.rates = rates;
  }

  // Builds spec i's executor (when it is not the current one) and fills its input.
  void prepare(std::size_t index);
  // n calls of the prepared spec, then the check of the output.
  [[nodiscard]] RankResult run_calls(std::uint64_t iterations, const Watch& watch);

  // world::Job: params carry {"algo", NAME} (what --algo auto chose on rank 0).
  void prepare(std::size_t bench, const world::Params& params) override;
  [[nodiscard]] world::RankReport run(std::uint64_t iterations, const Watch& watch) override {
    return run_calls(iterations, watch).to_report();
  }
  [[nodiscard]] std::string name(std::size_t bench) const override { return specs_.at(bench).name(); }
  [[nodiscard]] const Executor* current() const noexcept { return exec_.get(); }

 private:
  ctrl::Bootstrap& boot_;
  std::vector<CollSpec> specs_;
  SessionOptions options_;
  std::unique_ptr<world::World> world_;   // RDMA
  std::unique_ptr<world::ShmWorld> shm_;  // shared memory
  std::unique_ptr<ReducePool> pool_;
  std::optional<std::size_t> current_;
  std::unique_ptr<Executor> exec_;
  std::vector<std::byte> expected_;
};

// --pipeline's default for the ring: sub-chunks of at least kAutoSubChunkBytes, at most
// kAutoMaxChunks per ring chunk (S / n), so a reduction overlaps the next sub-chunk's transfer
// (executor.hpp) where each is large enough that its write's fixed cost stays small.
inline constexpr std::uint64_t kAutoSubChunkBytes = 512 * 1024;
inline constexpr std::uint64_t kAutoMaxChunks = 8;
[[nodiscard]] std::uint32_t auto_pipeline_chunks(std::uint64_t bytes, std::uint32_t nranks);
// The schedule options of the session for one spec (pipeline_chunks 0: auto).
[[nodiscard]] coll::Schedule schedule_for(const CollSpec& s, std::uint32_t nranks, std::uint32_t rank,
                                          std::uint32_t pipeline_chunks);
// FNV-1a over bytes: outputs of all-reduce and all-gather must hash alike on every rank.
[[nodiscard]] std::uint64_t fnv1a(const std::byte* p, std::uint64_t n) noexcept;

}  // namespace fabench::collbench
