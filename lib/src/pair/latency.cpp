// The latency engines: write and send ping-pongs, one-sided reads and atomics.
#include "fabench/pair/engines.hpp"

#include <algorithm>
#include <array>
#include <vector>

#include <fmt/format.h>

#include "engine_util.hpp"
#include "fabench/harness/clock.hpp"
#include "fabench/harness/loop.hpp"
#include "fabench/verbs/error.hpp"

namespace fabench::pair {

namespace {

using engine_util::busy_poll_ns;
using engine_util::completion_failure;
using engine_util::fail;
using engine_util::opcode_of;
using engine_util::RecvRing;
using engine_util::send_flags_for;
using engine_util::stall_failure;
using engine_util::watched;
using harness::kPollBatch;
using harness::kSignaled;
using harness::reap_signaled;
using harness::SampleClock;
using harness::Samples;
using harness::wait_cq;
using harness::Watchdog;
using verbs::QueuePair;

// ---------------------------------------------------------------- latency --

// Code layout: each engine is one hot function of its own ([[gnu::hot]],
// noinline), with its waits and reaps inlined (always_inline, here and on
// harness::wait_cq/reap_signaled) and the failure paths cold, so that an
// iteration runs through one compact stretch of code instead of jumping
// between run_latency's 9 KiB and out-of-line helpers. Measured in the test
// bed, where every extra jump target and code page costs time in the kernel's
// work too (docs/design/perftest-parity.md, "Code layout of the latency engines").

// How many signaled sends a ping-pong leaves outstanding when it goes on to
// wait for the peer. RC (tx depth >= 2): one; its completion comes with the
// responder's ACK, which arrives with or after the reply, and waiting for it
// first would put the ACK on the round trip. UC and UD, and -t 1: none;
// their completions are the local provider's (the rxe completer runs once
// the packet is sent); waited for at once, as perftest waits for every
// latency send's completion, that work most likely overlaps the message's
// flight instead of landing after the reply. Measured in the test bed, not
// traced (docs/design/perftest-parity.md, "Send completions and receives in the latency loops").
std::uint64_t signaled_to_keep(const TestSpec& spec) noexcept {
  return spec.tx_depth >= 2 && spec.transport == IBV_QPT_RC ? 1 : 0;
}

// A completed ping-pong: every iteration sent and received one message.
// (run_latency sets its seconds from the loop's clock.)
RunResult pingpong_result(std::uint64_t iters, std::uint32_t msg) {
  RunResult r;
  r.messages = iters;
  r.bytes = iters * msg;
  r.received = iters;
  return r;
}

[[gnu::hot, gnu::noinline]] RunResult write_pingpong(Side& side, Role role, std::uint64_t iters, Samples* samples,
                                                     const RunLimits& limits, SampleClock& clock) {
  const auto& spec = side.spec();
  const QueuePair& qp = side.qps()[0];
  const auto msg = static_cast<std::uint32_t>(spec.msg_bytes);
  ibv_sge sge = side.sge(0, side.tx(0), msg);
  ibv_send_wr wr{};
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.wr.rdma.remote_addr = side.remote_rx(0);
  wr.wr.rdma.rkey = side.remote()[0].rkey;
  const std::uint32_t base_flags = send_flags_for(side, msg, IBV_WR_RDMA_WRITE);
  // Selective signaling: one signaled WR per `every` keeps the send queue
  // drained; at most keep_signaled + 1 signaled WRs are ever outstanding, so
  // the queue never holds more than tx_depth WRs.
  const std::uint64_t every = std::max<std::uint32_t>(1, spec.tx_depth / 2);
  const std::uint64_t keep_signaled = signaled_to_keep(spec);
  volatile std::uint8_t* const in_flag = reinterpret_cast<volatile std::uint8_t*>(side.rx(0) + msg - 1);
  std::uint8_t* const out_flag = reinterpret_cast<std::uint8_t*>(side.tx(0) + msg - 1);
  std::array<ibv_wc, kPollBatch> wcs{};
  std::uint64_t signals_out = 0;
  std::uint64_t i = 0;
  Watchdog w(limits.stall, watched(limits), busy_poll_ns(limits), limits.keepalive);
  const bool leader = role == Role::kLeader;

  auto progress = [&]() __attribute__((always_inline)) { return i; };
  // Send completions until at most `limit` signaled WRs are outstanding.
  auto reap_until = [&](std::uint64_t limit) __attribute__((always_inline)) {
    return reap_signaled(side.send_cq(), spec.events, wcs, signals_out, limit, w, progress);
  };
  std::uint64_t t_prev = clock.start();
  for (i = 0; i < iters; ++i) {
    const auto v = static_cast<std::uint8_t>(i % 255 + 1);
    if (!leader) {
      while (*in_flag != v) {
        if (w.stalled(i)) [[unlikely]]
          return stall_failure(w, limits, "the leader's write", i, iters);
        if (w.due() && reap_until(~0ULL) < 0) [[unlikely]]
          return completion_failure(side, wcs[0]);
      }
    }
    *out_flag = v;
    const bool signaled = (i + 1) % every == 0 || i + 1 == iters;
    wr.send_flags = base_flags | (signaled ? kSignaled : 0U);
    if (const int rc = qp.post_send(wr); rc != 0) [[unlikely]]
      return fail(qp.send_error(rc, wr).what());
    if (signaled) {
      ++signals_out;
      if (signals_out > keep_signaled) {
        const int r = reap_until(keep_signaled);
        if (r < 0) [[unlikely]]
          return completion_failure(side, wcs[0]);
        if (r == 0) [[unlikely]]
          return stall_failure(w, limits, "a send completion", i, iters);
      }
    }
    if (leader) {
      while (*in_flag != v) {
        if (w.stalled(i)) [[unlikely]]
          return stall_failure(w, limits, "the follower's reply", i, iters);
        if (w.due() && reap_until(~0ULL) < 0) [[unlikely]]
          return completion_failure(side, wcs[0]);
      }
      const std::uint64_t t = clock.now();
      (void)samples->record(static_cast<double>(static_cast<std::int64_t>(t - t_prev)));
      t_prev = t;
    }
    if (w.passed(i)) [[unlikely]]
      return stall_failure(w, limits, "the next round trip", i, iters);
  }
  (void)clock.stop();
  if (const int r = reap_until(0); r <= 0) {
    return r < 0 ? completion_failure(side, wcs[0]) : stall_failure(w, limits, "the last send completion", i, iters);
  }
  return pingpong_result(iters, msg);
}

[[gnu::hot, gnu::noinline]] RunResult send_pingpong(Side& side, Role role, std::uint64_t iters, Samples* samples,
                                                    const RunLimits& limits, SampleClock& clock) {
  const auto& spec = side.spec();
  const QueuePair& qp = side.qps()[0];
  const auto msg = static_cast<std::uint32_t>(spec.msg_bytes);
  const bool ud = spec.transport == IBV_QPT_UD;
  ibv_sge sge = side.sge(0, side.tx(0), msg);
  ibv_send_wr wr{};
  wr.opcode = IBV_WR_SEND;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  if (ud) side.ahs()[0].address(wr);
  const std::uint32_t base_flags = send_flags_for(side, msg, IBV_WR_SEND);
  const std::uint64_t every = std::max<std::uint32_t>(1, spec.tx_depth / 2);
  RecvRing ring(side);
  auto& posted = side.run_state().rx_posted;
  std::array<ibv_wc, kPollBatch> wcs{};
  std::uint64_t signals_out = 0;
  std::uint64_t i = 0;
  Watchdog w(limits.stall, watched(limits), busy_poll_ns(limits), limits.keepalive);
  const bool leader = role == Role::kLeader;
  auto progress = [&]() __attribute__((always_inline)) { return i; };

  // Waits for one receive completion (send completions are reaped on the way).
  // Each side takes one message per iteration: the receive it consumed is
  // reposted only while fewer are posted than the rest of this run takes
  // (prepare_run fills the queue again before the next run). With -r at least
  // the iteration count nothing is posted in the loop, as perftest's send
  // latency posts no receive that the run will not use.
  auto await_recv = [&]() __attribute__((always_inline))->int {
    for (;;) {
      const int n = wait_cq(side.recv_cq(), spec.events, std::span(wcs.data(), 1), w, progress);
      if (n <= 0) return n;
      if (wcs[0].status != IBV_WC_SUCCESS) return -1;
      --posted[0];
      if (posted[0] >= iters - 1 - i) return 1;  // i: this iteration, whose message this was
      if (ring.post(side, 0) != 0) return -2;
      ++posted[0];
      return 1;
    }
  };
  const std::uint64_t keep_signaled = signaled_to_keep(spec);
  auto reap_until = [&](std::uint64_t limit) __attribute__((always_inline)) {
    return reap_signaled(side.send_cq(), spec.events, wcs, signals_out, limit, w, progress);
  };

  std::uint64_t t_prev = clock.start();
  for (i = 0; i < iters; ++i) {
    if (!leader) {
      const int r = await_recv();
      if (r == 0) [[unlikely]]
        return stall_failure(w, limits, "the leader's send", i, iters);
      if (r == -2) [[unlikely]]
        return fail("ibv_post_recv failed while reposting a receive");
      if (r < 0) [[unlikely]]
        return completion_failure(side, wcs[0]);
    }
    const bool signaled = (i + 1) % every == 0 || i + 1 == iters;
    wr.send_flags = base_flags | (signaled ? kSignaled : 0U);
    if (const int rc = qp.post_send(wr); rc != 0) [[unlikely]]
      return fail(qp.send_error(rc, wr).what());
    if (signaled) {
      ++signals_out;
      if (signals_out > keep_signaled) {
        const int r = reap_until(keep_signaled);
        if (r < 0) [[unlikely]]
          return completion_failure(side, wcs[0]);
        if (r == 0) [[unlikely]]
          return stall_failure(w, limits, "a send completion", i, iters);
      }
    }
    if (leader) {
      const int r = await_recv();
      if (r == 0) [[unlikely]]
        return stall_failure(w, limits, "the follower's reply", i, iters);
      if (r == -2) [[unlikely]]
        return fail("ibv_post_recv failed while reposting a receive");
      if (r < 0) [[unlikely]]
        return completion_failure(side, wcs[0]);
      const std::uint64_t t = clock.now();
      (void)samples->record(static_cast<double>(static_cast<std::int64_t>(t - t_prev)));
      t_prev = t;
    }
    if (w.passed(i)) [[unlikely]]
      return stall_failure(w, limits, "the next round trip", i, iters);
  }
  (void)clock.stop();
  if (const int r = reap_until(0); r <= 0) {
    return r < 0 ? completion_failure(side, wcs[0]) : stall_failure(w, limits, "the last send completion", i, iters);
  }
  return pingpong_result(iters, msg);
}

// Read and atomics: one-sided, the leader alone posts and waits for each
// completion (a full round trip).
[[gnu::hot, gnu::noinline]] RunResult onesided_latency(Side& side, std::uint64_t iters, Samples* samples,
                                                       const RunLimits& limits, SampleClock& clock) {
  const auto& spec = side.spec();
  const QueuePair& qp = side.qps()[0];
  const bool atomic = is_atomic(spec.op);
  ibv_sge sge = atomic ? side.sge(0, side.atomic_result(0), 8)
                       : side.sge(0, side.rx(0), static_cast<std::uint32_t>(spec.msg_bytes));
  ibv_send_wr wr{};
  wr.opcode = opcode_of(spec.op);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.send_flags = IBV_SEND_SIGNALED;
  if (atomic) {
    wr.wr.atomic.remote_addr = side.remote_atomic(0);
    wr.wr.atomic.rkey = side.remote()[0].rkey;
  } else {
    wr.wr.rdma.remote_addr = side.remote()[0].addr;  // the peer's tx slot holds its pattern
    wr.wr.rdma.rkey = side.remote()[0].rkey;
  }
  auto& counter = side.run_state().atomic_ops;  // the remote counter's current value
  const volatile std::uint64_t* result = reinterpret_cast<const volatile std::uint64_t*>(side.atomic_result(0));
  std::array<ibv_wc, 1> wcs{};
  std::uint64_t i = 0;
  std::uint64_t wrong = 0;
  Watchdog w(limits.stall, watched(limits), busy_poll_ns(limits), limits.keepalive);
  auto progress = [&]() __attribute__((always_inline)) { return i; };

  std::uint64_t t_prev = clock.start();
  for (i = 0; i < iters; ++i) {
    if (spec.op == Op::kFetchAdd) {
      wr.wr.atomic.compare_add = 1;
    } else if (spec.op == Op::kCompSwap) {
      wr.wr.atomic.compare_add = counter;
      wr.wr.atomic.swap = counter + 1;
    }
    if (const int rc = qp.post_send(wr); rc != 0) [[unlikely]]
      return fail(qp.send_error(rc, wr).what());
    const int n = wait_cq(side.send_cq(), spec.events, wcs, w, progress);
    if (n == 0) [[unlikely]]
      return stall_failure(w, limits, "a completion", i, iters);
    if (n < 0 || wcs[0].status != IBV_WC_SUCCESS) [[unlikely]]
      return completion_failure(side, wcs[0]);
    const std::uint64_t t = clock.now();
    (void)samples->record(static_cast<double>(static_cast<std::int64_t>(t - t_prev)));
    t_prev = t;
    // Both atomics return the old value, which must be the counter before
    // this operation; the check is a register compare after the timestamp.
    if (atomic) {
      wrong += (*result != counter) ? 1 : 0;
      ++counter;
    }
    if (w.passed(i)) [[unlikely]]
      return stall_failure(w, limits, "the next completion", i, iters);
  }
  (void)clock.stop();
  RunResult r;
  r.messages = iters;
  r.bytes = iters * (atomic ? kAtomicBytes : spec.msg_bytes);
  r.wrong = wrong;
  return r;
}

}  // namespace

RunResult run_latency(Side& side, Role role, std::uint64_t iterations, Samples* samples, const RunLimits& limits) {
  const auto& spec = side.spec();
  if (role == Role::kLeader && (samples == nullptr || samples->capacity() < iterations)) {
    return fail("internal: sample buffer smaller than the iteration count");
  }
  SampleClock clock(role == Role::kLeader ? limits.clock : harness::ClockSource::kMonotonic);
  RunResult r;
  switch (spec.op) {
    case Op::kWrite: r = write_pingpong(side, role, iterations, samples, limits, clock); break;
    case Op::kSend: r = send_pingpong(side, role, iterations, samples, limits, clock); break;
    case Op::kRead:
    case Op::kFetchAdd:
    case Op::kCompSwap:
      if (role == Role::kFollower) return {};  // one-sided: nothing to do here
      r = onesided_latency(side, iterations, samples, limits, clock);
      break;
    default: return fail("internal: unknown operation");
  }
  if (!r.ok) return r;
  // Ticks to nanoseconds at the rate measured over this loop (1 for CLOCK_MONOTONIC).
  r.seconds = clock.seconds();
  if (samples != nullptr) samples->scale(clock.ns_per_tick());
  return r;
}

}  // namespace fabench::pair
