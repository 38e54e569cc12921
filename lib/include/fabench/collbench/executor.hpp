// Executor: runs one rank's collective schedule (coll/schedule.hpp) over a transport
// (transport.hpp): RDMA writes with immediate over a World, or copies into shared memory over a
// ShmWorld. The loop is one template over the transport, the same steps for both.
//
// Why write-with-immediate (RDMA): its receive completion is generated only after the written
// data is in place, so "arrival" is exact without polling a flag word (and without relying on
// the last byte of a write landing last, which the verbs specification does not promise); the
// 32-bit immediate says which call parity and step the data belongs to, so arrivals that come
// early (a peer already in the next step or call) are counted, not lost. The shared-memory
// transport keeps the same rule with one counter per (parity, step), bumped after the copy.
//
// Memory (one arena per rank, the same layout everywhere):
//   [ input | output[0] | output[1] | scratch[0] | scratch[1] ]
// Calls alternate between the two output/scratch copies (parity = call & 1). Every rank's
// output depends on every rank's input in all four collectives, so no rank can finish call i
// before every rank has started it: a rank is at most one call ahead of any peer, and two
// copies keep call i+1's writes away from what call i still reads.
//
// The loop: per step, post the step's writes, then poll until the step's expected arrivals
// have landed and its writes have completed, running the step's local reductions and copies
// (on ReducePool's threads; skipped with compute = false, where the output is not the
// collective's) in order, each as soon as the arrivals it reads or writes have landed: where a
// step's arrivals come from one peer they land in the order it posted them (one QP, or one
// counter it bumps in order), so an op that needs the first m of them runs while the others are
// still on the wire: with --pipeline's sub-chunks, sub-chunk j is reduced while j+1 flies.
// (Rule C of schedule.hpp lets ops run before the step's own writes have completed.) Nothing allocates, logs or throws inside; every wait is bounded (stall
// timeout) and the control channel is looked at while waiting (Watch). The time in the ops is
// measured apart from the rest (posting and waiting: the wire's share).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "fabench/coll/reduce.hpp"
#include "fabench/coll/schedule.hpp"
#include "fabench/collbench/reduce_pool.hpp"
#include "fabench/collbench/transport.hpp"
#include "fabench/world/driver.hpp"

namespace fabench::collbench {

using world::Watch;

struct ExecOptions {
  bool compute = true;          // false: reductions and copies skipped (--compute none)
  ReducePool* pool = nullptr;   // null: the ops run on the calling thread
};

struct ExecResult {
  bool ok = true;
  std::string error;   // one line when !ok
  double seconds = 0;  // the `calls` calls, first post to last op
  double ops_seconds = 0;  // of which in local reductions and copies
  std::uint64_t calls_done = 0;
  bool control_event = false;     // stopped because a watched channel closed or spoke
  std::size_t channel_index = 0;  // which one (control_event)
  bool channel_closed = false;
};

class Executor {
 public:
  // Prebuild every write of `schedule` for both parities. The world's arena must be at least
  // ArenaLayout::of(schedule).total bytes, and every rank the schedule writes to a peer.
  Executor(const world::World& world, coll::Schedule schedule, coll::DType dtype, coll::ReduceOp op,
           const ExecOptions& options);
  Executor(world::ShmWorld& world, coll::Schedule schedule, coll::DType dtype, coll::ReduceOp op,
           const ExecOptions& options);
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  [[nodiscard]] const coll::Schedule& schedule() const noexcept { return schedule_; }
  [[nodiscard]] const ArenaLayout& layout() const noexcept { return layout_; }
  [[nodiscard]] std::byte* input() const noexcept { return base_ + layout_.input; }
  // The output of the last call run (or parity 0 before any).
  [[nodiscard]] const std::byte* last_output() const noexcept;

  // Runs `calls` back-to-back calls. Every rank must run the same number.
  [[nodiscard]] ExecResult run(std::uint64_t calls, const Watch& watch);

 private:
  template <class T>
  ExecResult run_on(T& transport, std::uint64_t calls, const Watch& watch);
  template <class T>
  bool wait_step(T& transport, world::Waiter& waiter, unsigned p, std::size_t k, std::uint64_t call,
                 const Watch& watch, ExecResult& r, std::size_t op, std::size_t op_end, std::uint64_t& ops_ns) noexcept;
  template <class T>
  bool post_step(T& transport, std::size_t w, std::size_t w_end, unsigned p, ExecResult& r) noexcept;
  [[gnu::cold]] std::string stall_error(std::size_t k, std::uint64_t call, const Watch& watch,
                                        const std::string& waiting_for) const;
  void run_op(std::size_t index, unsigned parity) noexcept;
  // op_need_[i]: arrivals of op i's step that must have landed before it runs.
  void plan_op_needs();

  coll::Schedule schedule_;
  coll::DType dtype_;
  coll::ReduceOp op_;
  ExecOptions options_;
  ArenaLayout layout_;
  std::variant<std::monostate, RdmaTransport, ShmTransport> transport_;
  std::byte* base_ = nullptr;
  std::uint64_t call_seq_ = 0;
  std::vector<std::uint64_t> op_need_;
};

}  // namespace fabench::collbench
