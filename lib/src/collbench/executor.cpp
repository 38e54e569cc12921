#include "fabench/collbench/executor.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "fabench/harness/loop.hpp"

namespace fabench::collbench {

Executor::Executor(const world::World& world, coll::Schedule schedule, coll::DType dtype, coll::ReduceOp op,
                   const ExecOptions& options)
    : schedule_(std::move(schedule)), dtype_(dtype), op_(op), options_(options), layout_(ArenaLayout::of(schedule_)) {
  base_ = transport_.emplace<RdmaTransport>(world, schedule_, layout_).base();
}

Executor::Executor(world::ShmWorld& world, coll::Schedule schedule, coll::DType dtype, coll::ReduceOp op,
                   const ExecOptions& options)
    : schedule_(std::move(schedule)), dtype_(dtype), op_(op), options_(options), layout_(ArenaLayout::of(schedule_)) {
  base_ = transport_.emplace<ShmTransport>(world, schedule_, layout_).base();
}

const std::byte* Executor::last_output() const noexcept {
  const unsigned parity = call_seq_ == 0 ? 0U : static_cast<unsigned>((call_seq_ - 1) & 1U);
  return base_ + layout_.output[parity];
}

void Executor::run_ops(std::size_t step, unsigned parity) noexcept {
  for (const auto& op : schedule_.step(step).ops) {
    std::byte* dst = base_ + layout_.offset(op.dst_buf, parity) + op.dst_offset;
    const std::byte* src = base_ + layout_.offset(op.src_buf, parity) + op.src_offset;
    if (options_.pool != nullptr) {
      options_.pool->run(op.kind, dtype_, op_, dst, src, op.bytes);
    } else if (op.kind == coll::OpKind::kReduce) {
      coll::reduce(dtype_, op_, dst, src, op.bytes / coll::dtype_size(dtype_));
    } else {
      std::memcpy(dst, src, op.bytes);
    }
  }
}

// Polls until step k of parity p is done; false (r filled) on an error, a control event or a
// stall.
template <class T>
bool Executor::wait_step(T& t, world::Waiter& waiter, unsigned p, std::size_t k, std::uint64_t call,
                         const Watch& watch, ExecResult& r) noexcept {
  while (!t.step_done(p, k)) {
    const int n = t.poll(p, k, r.error);
    if (n < 0) [[unlikely]] {
      r.ok = false;
      return false;
    }
    if (n > 0) {
      waiter.progress();
      continue;
    }
    const auto verdict = waiter.idle();
    if (verdict == world::Waiter::Verdict::kGoOn) continue;
    r.ok = false;
    if (verdict == world::Waiter::Verdict::kControl) {
      r.control_event = true;
      r.channel_index = waiter.channel_index();
      r.channel_closed = waiter.channel_closed();
      r.error = fmt::format("stopped at step {} of {} in call {}", k + 1, schedule_.num_steps(), call + 1);
      return false;
    }
    r.error = fmt::format("no progress for {} s at step {} of {} in call {}: {}", watch.stall.count() / 1000, k + 1,
                          schedule_.num_steps(), call + 1, t.waiting_for(p, k));
    // A write completes only when all of it has landed: on a slow link, large writes sharing
    // it can each take longer than the stall limit while every byte moves.
    const auto writes = schedule_.step(k).writes;
    std::uint64_t largest = 0;
    for (const auto& w : writes) largest = std::max(largest, w.bytes);
    if (largest >= (std::uint64_t{1} << 20)) {
      r.error += fmt::format(
          " ({} writes of up to {} MiB in this step: if the link needs longer than {} s for them, raise --timeout)",
          writes.size(), largest >> 20, watch.stall.count() / 1000);
    }
    return false;
  }
  return true;
}

template <class T>
ExecResult Executor::run_on(T& t, std::uint64_t calls, const Watch& watch) {
  ExecResult r;
  world::Waiter waiter(watch);
  std::uint64_t ops_ns = 0;
  const std::uint64_t t_start = harness::now_ns();
  for (std::uint64_t c = 0; c < calls; ++c) {
    const auto p = static_cast<unsigned>(call_seq_ & 1U);
    std::size_t w = 0;
    for (std::size_t k = 0; k < schedule_.num_steps(); ++k) {
      const auto step = schedule_.step(k);
      for (std::size_t i = 0; i < step.writes.size(); ++i, ++w) {
        if (t.post(w, p, r.error) != 0) [[unlikely]] {
          r.ok = false;
          return r;
        }
      }
      if (!wait_step(t, waiter, p, k, c, watch, r)) return r;
      t.consume(p, k);
      if (options_.compute && !step.ops.empty()) {
        const std::uint64_t t0 = harness::now_ns();
        run_ops(k, p);
        ops_ns += harness::now_ns() - t0;
      }
    }
    ++call_seq_;
    r.calls_done = c + 1;
  }
  r.seconds = static_cast<double>(harness::now_ns() - t_start) / 1e9;
  r.ops_seconds = static_cast<double>(ops_ns) / 1e9;
  return r;
}

ExecResult Executor::run(std::uint64_t calls, const Watch& watch) {
  return std::visit(
      [&](auto& t) -> ExecResult {
        if constexpr (std::is_same_v<std::decay_t<decltype(t)>, std::monostate>) {
          ExecResult r;
          r.ok = false;
          r.error = "no transport";
          return r;
        } else {
          return run_on(t, calls, watch);
        }
      },
      transport_);
}

}  // namespace fabench::collbench
