// ScheduleBuilder: how schedules are put together, and the per-algorithm builders behind
// build_schedule() (one source file per family: ring.cpp, rhd.cpp (with recursive doubling),
// oneshot.cpp, alltoall.cpp).
// Public so tests can hand-build schedules that break a rule and watch the simulator catch it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "fabench/coll/schedule.hpp"

namespace fabench::coll {

// First element of block b when `count` elements are cut into `nblocks` balanced blocks: block b
// is [block_begin(b), block_begin(b + 1)), of floor or ceil(count / nblocks) elements, empty
// blocks only when count < nblocks. Exact for any count (no count * b overflow).
[[nodiscard]] std::uint64_t block_begin(std::uint64_t count, std::uint64_t nblocks, std::uint64_t b);
[[nodiscard]] inline std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

// Collects items with their step in any order, then lays them out by step, keeping the order in
// which each step's items were added (op order matters). Zero-byte items are dropped here, so a
// builder need not special-case empty chunks: sender and receiver compute the same sizes and
// both drop the same items.
class ScheduleBuilder {
 public:
  // `meta` carries everything but the items; num_steps is the call's step count.
  ScheduleBuilder(Schedule meta, std::size_t num_steps);

  void write(std::size_t step, std::uint32_t dst_rank, Region src, Region dst, std::uint64_t bytes);
  void expect(std::size_t step, std::uint32_t src_rank, std::uint64_t bytes);
  void copy(std::size_t step, Region src, Region dst, std::uint64_t bytes);
  void reduce(std::size_t step, Region src, Region dst, std::uint64_t bytes);

  [[nodiscard]] Schedule finish() &&;

 private:
  void check_step(std::size_t step) const;
  void op(std::size_t step, OpKind kind, Region src, Region dst, std::uint64_t bytes);

  Schedule s_;
  std::size_t num_steps_;
  std::vector<std::uint32_t> write_steps_;
  std::vector<std::uint32_t> expect_steps_;
  std::vector<std::uint32_t> op_steps_;
};

// What every builder gets: validated by build_schedule (supported pair, rank < nranks, nranks
// >= 2, sizes fit in 64 bits). count is the effective count.
struct BuildParams {
  Collective collective = Collective::kAllReduce;
  Algorithm algorithm = Algorithm::kRing;
  std::uint32_t nranks = 2;
  std::uint32_t rank = 0;
  std::uint64_t count = 0;
  std::uint32_t dtype_bytes = 1;
  std::uint32_t pipeline_chunks = 1;
};

// Schedule metadata (sizes included) for p; the builders start from it.
[[nodiscard]] Schedule schedule_meta(const BuildParams& p);

[[nodiscard]] Schedule build_ring_all_reduce(const BuildParams& p);
[[nodiscard]] Schedule build_ring_all_gather(const BuildParams& p);
[[nodiscard]] Schedule build_ring_reduce_scatter(const BuildParams& p);
[[nodiscard]] Schedule build_rhd_all_reduce(const BuildParams& p);
[[nodiscard]] Schedule build_rd_all_reduce(const BuildParams& p);
[[nodiscard]] Schedule build_one_shot_all_reduce(const BuildParams& p);
[[nodiscard]] Schedule build_pairwise_all_to_all(const BuildParams& p);
[[nodiscard]] Schedule build_all_at_once_all_to_all(const BuildParams& p);

}  // namespace fabench::coll
