// Executor: runs one rank's collective schedule (coll/schedule.hpp) over a
// World with RDMA writes with immediate.
//
// Why write-with-immediate: its receive completion is generated only after
// the written data is in place, so "arrival" is exact without polling a flag
// word (and without relying on the last byte of a write landing last, which
// the verbs specification does not promise); the 32-bit immediate says which
// call parity and step the data belongs to, so arrivals that come early (a
// peer already in the next step or call) are counted, not lost.
//
// Memory (one arena per rank, the same layout everywhere):
//   [ input | output[0] | output[1] | scratch[0] | scratch[1] ]
// Calls alternate between the two output/scratch copies (parity = call & 1).
// Every rank's output depends on every rank's input in all four collectives,
// so no rank can finish call i before every rank has started it: a rank is
// at most one call ahead of any peer, and two copies keep call i+1's writes
// away from what call i still reads.
//
// The loop: per step, post the step's writes (prebuilt, signaled), then poll
// the receive and send CQs until the step's expected arrivals have landed and
// its writes have completed, then run the step's local reductions and copies.
// Nothing allocates, logs or throws inside; every wait is bounded (stall
// timeout) and the control channel is looked at while waiting (Watch).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <infiniband/verbs.h>

#include "fabench/coll/reduce.hpp"
#include "fabench/coll/schedule.hpp"
#include "fabench/ctrl/channel.hpp"
#include "fabench/world/driver.hpp"
#include "fabench/world/world.hpp"

namespace fabench::collbench {

struct ArenaLayout {
  std::uint64_t input = 0;
  std::uint64_t output[2] = {0, 0};
  std::uint64_t scratch[2] = {0, 0};
  std::uint64_t total = 0;

  // Regions aligned to 64 bytes (cache lines; element alignment for the kernels).
  [[nodiscard]] static ArenaLayout of(const coll::Schedule& s);
  [[nodiscard]] std::uint64_t offset(coll::Buf b, unsigned parity) const noexcept;
};

using world::Watch;

struct ExecResult {
  bool ok = true;
  std::string error;   // one line when !ok
  double seconds = 0;  // the `calls` calls, first post to last op
  std::uint64_t calls_done = 0;
  bool control_event = false;     // stopped because a watched channel closed or spoke
  std::size_t channel_index = 0;  // which one (control_event)
  bool channel_closed = false;
};

class Executor {
 public:
  // Prebuilds every work request of `schedule` for both parities. The world's
  // arena must be at least ArenaLayout::of(schedule).total bytes, and every
  // rank the schedule writes to must be a peer of the world.
  Executor(const world::World& world, coll::Schedule schedule, coll::DType dtype, coll::ReduceOp op);

  [[nodiscard]] const coll::Schedule& schedule() const noexcept { return schedule_; }
  [[nodiscard]] const ArenaLayout& layout() const noexcept { return layout_; }
  [[nodiscard]] std::byte* input() const noexcept { return base_ + layout_.input; }
  // The output of the last call run (or parity 0 before any).
  [[nodiscard]] const std::byte* last_output() const noexcept;
  // Posts the initial receives: once per world, before the first run of any executor.
  static void post_receives(const world::World& world);

  // Runs `calls` back-to-back calls. Every rank must run the same number.
  [[nodiscard]] ExecResult run(std::uint64_t calls, const Watch& watch);

 private:
  struct Wait;
  int drain(std::uint64_t& outstanding, ibv_wc* wcs, std::string& error) noexcept;
  void run_ops(std::size_t step, unsigned parity) noexcept;

  const world::World& world_;
  coll::Schedule schedule_;
  coll::DType dtype_;
  coll::ReduceOp op_;
  std::uint32_t elem_bytes_;
  ArenaLayout layout_;
  std::byte* base_;
  std::vector<ibv_sge> sges_[2];
  std::vector<ibv_send_wr> wrs_[2];
  std::vector<const verbs::QueuePair*> wr_qp_;  // by write index
  std::vector<std::uint32_t> expected_;         // arrivals per step
  std::vector<std::uint32_t> arrived_[2];       // arrivals per step, per parity
  std::uint64_t call_seq_ = 0;
};

}  // namespace fabench::collbench
