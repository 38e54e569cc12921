#include "fabench/collbench/executor.hpp"

#include <algorithm>
#include <cstring>
#include <map>

#include <fmt/format.h>

#include "fabench/harness/loop.hpp"

namespace fabench::collbench {

Executor::Executor(const world::World& world, coll::Schedule schedule, coll::DType dtype, coll::ReduceOp op,
                   const ExecOptions& options)
    : schedule_(std::move(schedule)), dtype_(dtype), op_(op), options_(options), layout_(ArenaLayout::of(schedule_)) {
  base_ = transport_.emplace<RdmaTransport>(world, schedule_, layout_).base();
  plan_op_needs();
}

Executor::Executor(world::ShmWorld& world, coll::Schedule schedule, coll::DType dtype, coll::ReduceOp op,
                   const ExecOptions& options)
    : schedule_(std::move(schedule)), dtype_(dtype), op_(op), options_(options), layout_(ArenaLayout::of(schedule_)) {
  base_ = transport_.emplace<ShmTransport>(world, schedule_, layout_).base();
  plan_op_needs();
}

const std::byte* Executor::last_output() const noexcept {
  const unsigned parity = call_seq_ == 0 ? 0U : static_cast<unsigned>((call_seq_ - 1) & 1U);
  return base_ + layout_.output[parity];
}

namespace {

struct Span {
  coll::Buf buf;
  std::uint64_t begin;
  std::uint64_t end;
};

bool overlaps(const Span& a, const Span& b) { return a.buf == b.buf && a.begin < b.end && b.begin < a.end; }

}  // namespace

void Executor::plan_op_needs() {
  const auto& s = schedule_;
  op_need_.assign(s.ops.size(), 0);
  std::map<std::uint32_t, coll::Schedule> peers;  // the senders' schedules, built once each
  std::size_t first_op = 0;
  for (std::size_t k = 0; k < s.num_steps(); ++k) {
    const auto step = s.step(k);
    const auto expected = static_cast<std::uint64_t>(step.expect_from.size());
    const bool one_source =
        expected > 0 && std::all_of(step.expect_from.begin(), step.expect_from.end(),
                                    [&](std::uint32_t r) { return r == step.expect_from.front(); });
    // What lands in this step, in the order it lands (one sender only; else: all of it first).
    std::vector<Span> landing;
    if (one_source) {
      const std::uint32_t src = step.expect_from.front();
      auto it = peers.find(src);
      if (it == peers.end()) {
        coll::ScheduleOptions o;
        o.pipeline_chunks = s.pipeline_chunks;
        it = peers
                 .emplace(src, coll::build_schedule(s.collective, s.algorithm, s.nranks, src, s.count,
                                                    s.dtype_bytes, o))
                 .first;
      }
      for (const auto& t : it->second.step(k).writes) {
        if (t.dst_rank == s.rank) landing.push_back({t.dst_buf, t.dst_offset, t.dst_offset + t.bytes});
      }
    }
    const bool ordered = one_source && landing.size() == expected;
    for (std::size_t i = 0; i < step.ops.size(); ++i) {
      const auto& op = step.ops[i];
      const Span src{op.src_buf, op.src_offset, op.src_offset + op.bytes};
      const Span dst{op.dst_buf, op.dst_offset, op.dst_offset + op.bytes};
      std::uint64_t need = ordered ? 0 : expected;
      for (std::size_t a = 0; ordered && a < landing.size(); ++a) {
        if (overlaps(landing[a], src) || overlaps(landing[a], dst)) need = a + 1;
      }
      // Ops run in order: none needs fewer arrivals than the one before it.
      if (i > 0) need = std::max(need, op_need_[first_op + i - 1]);
      op_need_[first_op + i] = need;
    }
    first_op += step.ops.size();
  }
}

void Executor::run_op(std::size_t index, unsigned parity) noexcept {
  const auto& op = schedule_.ops[index];
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

// Polls until step k of parity p is done, running its ops [op, op_end) as their arrivals land;
// false (r filled) on an error, a control event or a stall.
template <class T>
bool Executor::wait_step(T& t, world::Waiter& waiter, unsigned p, std::size_t k, std::uint64_t call,
                         const Watch& watch, ExecResult& r, std::size_t op, std::size_t op_end,
                         std::uint64_t& ops_ns) noexcept {
  for (;;) {
    if (op < op_end && t.landed(p, k) >= op_need_[op]) {
      const std::uint64_t t0 = harness::now_ns();
      do {
        run_op(op++, p);
      } while (op < op_end && t.landed(p, k) >= op_need_[op]);
      ops_ns += harness::now_ns() - t0;
    }
    if (op == op_end && t.step_done(p, k)) return true;
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
    r.error = stall_error(k, call, watch, t.waiting_for(p, k));
    return false;
  }
}

std::string Executor::stall_error(std::size_t k, std::uint64_t call, const Watch& watch,
                                  const std::string& waiting_for) const {
  std::string error = fmt::format("no progress for {} s at step {} of {} in call {}: {}", watch.stall.count() / 1000,
                                  k + 1, schedule_.num_steps(), call + 1, waiting_for);
  // A write completes only when all of it has landed: on a slow link, large writes sharing
  // it can each take longer than the stall limit while every byte moves.
  const auto writes = schedule_.step(k).writes;
  std::uint64_t largest = 0;
  for (const auto& w : writes) largest = std::max(largest, w.bytes);
  if (largest >= (std::uint64_t{1} << 20)) {
    error += fmt::format(
        " ({} writes of up to {} MiB in this step: if the link needs longer than {} s for them, raise --timeout)",
        writes.size(), largest >> 20, watch.stall.count() / 1000);
  }
  return error;
}

// The post step: step k's writes, [w, w_end) of the schedule's, for parity p; false (r filled)
// when one fails.
template <class T>
bool Executor::post_step(T& t, std::size_t w, std::size_t w_end, unsigned p, ExecResult& r) noexcept {
  for (; w < w_end; ++w) {
    if (t.post(w, p, r.error) != 0) [[unlikely]] {
      r.ok = false;
      return false;
    }
  }
  return true;
}

// One call after another; per step: post its writes, then wait for it, running its ops.
template <class T>
ExecResult Executor::run_on(T& t, std::uint64_t calls, const Watch& watch) {
  ExecResult r;
  world::Waiter waiter(watch);
  std::uint64_t ops_ns = 0;
  const std::uint64_t t_start = harness::now_ns();
  for (std::uint64_t c = 0; c < calls; ++c) {
    const auto p = static_cast<unsigned>(call_seq_ & 1U);
    std::size_t w = 0;
    std::size_t op = 0;
    for (std::size_t k = 0; k < schedule_.num_steps(); ++k) {
      const auto step = schedule_.step(k);
      if (!post_step(t, w, w + step.writes.size(), p, r)) return r;
      w += step.writes.size();
      const std::size_t op_end = op + step.ops.size();
      if (!wait_step(t, waiter, p, k, c, watch, r, options_.compute ? op : op_end, op_end, ops_ns)) return r;
      t.consume(p, k);
      op = op_end;
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
