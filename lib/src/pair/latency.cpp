// The latency engines: write and send ping-pongs, one-sided reads and atomics.
#include "fabench/pair/engines.hpp"

#include <algorithm>
#include <array>
#include <vector>

#include <fmt/format.h>

#include "engine_util.hpp"
#include "fabench/harness/clock.hpp"
#include "fabench/harness/loop.hpp"
#include "fabench/harness/steps.hpp"
#include "fabench/verbs/error.hpp"

namespace fabench::pair {

namespace {

using namespace engine_util;  // the engines' shared steps and failures (engine_util.hpp)
using harness::kPollBatch;
using harness::reap_signaled;
using harness::SampleClock;
using harness::Samples;
using harness::wait_cq;
using harness::Watchdog;
using verbs::QueuePair;

// ---------------------------------------------------------------- latency --

// Code layout: each engine is one hot function of its own ([[gnu::hot]],
// noinline), with its steps inlined (always_inline, here and in
// harness/steps.hpp) and the failure paths cold, so that an iteration runs
// through one compact stretch of code instead of jumping between out-of-line
// helpers: in the test bed every extra jump target and code page costs time
// in the kernel's work too (docs/design/perftest-parity.md, "Code layout of
// the latency engines").

// How many signaled sends a ping-pong leaves outstanding when it goes on to
// wait for the peer. RC (tx depth >= 2): one; its completion comes with the
// responder's ACK, which arrives with or after the reply, and waiting for it
// first would put the ACK on the round trip. UC and UD, and -t 1: none;
// their completions are the local provider's (the rxe completer runs once
// the packet is sent); waited for at once, as perftest waits for every
// latency send's completion, that work most likely overlaps the message's
// flight instead of landing after the reply (docs/design/perftest-parity.md,
// "Send completions and receives in the latency loops").
std::uint64_t signaled_to_keep(const TestSpec& spec) noexcept {
  return spec.tx_depth >= 2 && spec.transport == IBV_QPT_RC ? 1 : 0;
}

// The one line of a ping-pong step that did not return kStepDone (cold: the
// loop passes what it knows by value and leaves at once).
[[gnu::cold, gnu::noinline]] RunResult turn_failure(int step, const Side& side, const Watchdog& w,
                                                    const RunLimits& limits, const char* waiting_for, std::uint64_t i,
                                                    std::uint64_t iters, int post_rc, const ibv_send_wr& wr,
                                                    const ibv_wc& wc) {
  switch (step) {
    case harness::kStepStalled: return stall_failure(w, limits, waiting_for, i, iters);
    case harness::kStepRepostFailed: return fail("ibv_post_recv failed while reposting a receive");
    case harness::kStepPostFailed: return fail(side.qps()[0].send_error(post_rc, wr).what());
    default: return completion_failure(side, wc);
  }
}

// Write ping-pong: the peer's message is the last byte of its write, polled
// in memory (perftest's method); the flag carries i % 255 + 1.
struct WriteTurn {
  static constexpr ibv_wr_opcode kOpcode = IBV_WR_RDMA_WRITE;
  static constexpr const char* kLeaders = "the leader's write";

  WriteTurn(Side& side, std::uint64_t /*iters*/, ibv_send_wr& wr)
      : in_flag(reinterpret_cast<volatile std::uint8_t*>(side.rx(0) + side.spec().msg_bytes - 1)),
        out_flag(reinterpret_cast<std::uint8_t*>(side.tx(0) + side.spec().msg_bytes - 1)) {
    wr.wr.rdma.remote_addr = side.remote_rx(0);
    wr.wr.rdma.rkey = side.remote()[0].rkey;
  }
  [[nodiscard, gnu::always_inline]] static std::uint8_t flag(std::uint64_t i) noexcept {
    return static_cast<std::uint8_t>(i % 255 + 1);
  }
  [[gnu::always_inline]] void before_send(std::uint64_t i) noexcept { *out_flag = flag(i); }
  // Waits for the peer's message of iteration i; send completions are reaped
  // whenever the Watchdog reads the clock.
  template <typename Progress, typename Reap>
  [[nodiscard, gnu::always_inline]] int await(std::uint64_t i, Watchdog& w, std::span<ibv_wc> /*wcs*/,
                                              Progress /*progress*/, Reap reap_until) noexcept {
    const std::uint8_t v = flag(i);
    while (*in_flag != v) {
      if (w.stalled(i)) [[unlikely]]
        return harness::kStepStalled;
      if (w.due() && reap_until(~0ULL) < 0) [[unlikely]]
        return harness::kStepFailedWc;
    }
    return harness::kStepDone;
  }

  volatile std::uint8_t* const in_flag;
  std::uint8_t* const out_flag;
};

// Send ping-pong: the peer's message is a receive completion. Each side takes
// one message per iteration: the receive it consumed is reposted only while
// fewer are posted than the rest of this run takes (prepare_run fills the
// queue again before the next run). With -r at least the iteration count
// nothing is posted in the loop, as perftest's send latency posts no receive
// that the run will not use.
struct SendTurn {
  static constexpr ibv_wr_opcode kOpcode = IBV_WR_SEND;
  static constexpr const char* kLeaders = "the leader's send";

  SendTurn(Side& s, std::uint64_t n, ibv_send_wr& wr)
      : side(s), events(s.spec().events), iters(n), ring(s), posted(s.run_state().rx_posted[0]) {
    if (s.spec().transport == IBV_QPT_UD) s.ahs()[0].address(wr);
  }
  [[gnu::always_inline]] void before_send(std::uint64_t /*i*/) noexcept {}
  template <typename Progress, typename Reap>
  [[nodiscard, gnu::always_inline]] int await(std::uint64_t i, Watchdog& w, std::span<ibv_wc> wcs, Progress progress,
                                              Reap /*reap_until*/) noexcept {
    const int n = wait_cq(side.recv_cq(), events, wcs.first(1), w, progress);
    if (n <= 0) return n == 0 ? harness::kStepStalled : harness::kStepFailedWc;
    if (wcs[0].status != IBV_WC_SUCCESS) return harness::kStepFailedWc;
    --posted;
    if (posted >= iters - 1 - i) return harness::kStepDone;  // i: this iteration, whose message this was
    if (ring.post(side, 0) != 0) return harness::kStepRepostFailed;
    ++posted;
    return harness::kStepDone;
  }

  const Side& side;
  const bool events;
  const std::uint64_t iters;
  RecvRing ring;
  std::uint32_t& posted;
};

// One ping-pong loop for both kinds of turn: the follower waits for the
// leader's message and answers; the leader sends, waits for the answer and
// takes the round trip's time. Selective signaling: one signaled WR per
// `every` keeps the send queue drained; at most keep + 1 signaled WRs are
// ever outstanding, so the queue never holds more than tx_depth WRs.
template <typename Turn>
[[gnu::hot, gnu::noinline]] RunResult pingpong(Side& side, Role role, std::uint64_t iters, Samples* samples,
                                               const RunLimits& limits, SampleClock& clock) {
  const auto& spec = side.spec();
  const QueuePair& qp = side.qps()[0];
  const auto msg = static_cast<std::uint32_t>(spec.msg_bytes);
  ibv_sge sge = side.sge(0, side.tx(0), msg);
  ibv_send_wr wr{};
  wr.opcode = Turn::kOpcode;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  Turn turn(side, iters, wr);
  const std::uint32_t base_flags = send_flags_for(side, msg, Turn::kOpcode);
  const std::uint64_t every = std::max<std::uint32_t>(1, spec.tx_depth / 2);
  const std::uint64_t keep = signaled_to_keep(spec);
  std::array<ibv_wc, kPollBatch> wcs{};
  std::uint64_t signals_out = 0;
  std::uint64_t i = 0;
  int post_rc = 0;
  Watchdog w(limits.stall, watched(limits), busy_poll_ns(limits), limits.keepalive);
  const bool leader = role == Role::kLeader;
  auto progress = [&]() __attribute__((always_inline)) { return i; };
  auto reap_until = [&](std::uint64_t limit) __attribute__((always_inline)) {
    return reap_signaled(side.send_cq(), spec.events, wcs, signals_out, limit, w, progress);
  };
  auto failure = [&](int step, const char* waiting_for) __attribute__((always_inline)) {
    return turn_failure(step, side, w, limits, waiting_for, i, iters, post_rc, wr, wcs[0]);
  };

  std::uint64_t t_prev = clock.start();
  for (i = 0; i < iters; ++i) {
    if (!leader) {
      if (const int r = turn.await(i, w, wcs, progress, reap_until); r != harness::kStepDone) [[unlikely]]
        return failure(r, Turn::kLeaders);
    }
    turn.before_send(i);
    const bool signaled = (i + 1) % every == 0 || i + 1 == iters;
    if (const int r = harness::post_turn(qp, wr, base_flags, signaled, side.send_cq(), spec.events, wcs, signals_out,
                                         keep, w, progress, post_rc);
        r != harness::kStepDone) [[unlikely]]
      return failure(r, "a send completion");
    if (leader) {
      if (const int r = turn.await(i, w, wcs, progress, reap_until); r != harness::kStepDone) [[unlikely]]
        return failure(r, "the follower's reply");
      const std::uint64_t t = clock.now();
      (void)samples->record(static_cast<double>(static_cast<std::int64_t>(t - t_prev)));
      t_prev = t;
    }
    if (w.passed(i)) [[unlikely]]
      return failure(harness::kStepStalled, "the next round trip");
  }
  (void)clock.stop();
  if (const int r = reap_until(0); r != harness::kStepDone) return failure(r, "the last send completion");
  RunResult r;
  r.messages = iters;
  r.bytes = iters * msg;
  r.received = iters;
  return r;
}

// The one signalled WR of a read or atomic latency run, its SGE in `sge`:
// a read of the peer's tx slot (it holds the peer's pattern), or an atomic on
// the peer's counter into this side's result slot.
ibv_send_wr onesided_wr(Side& side, ibv_sge& sge) {
  const auto& spec = side.spec();
  const bool atomic = is_atomic(spec.op);
  sge = atomic ? side.sge(0, side.atomic_result(0), 8)
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
    wr.wr.rdma.remote_addr = side.remote()[0].addr;
    wr.wr.rdma.rkey = side.remote()[0].rkey;
  }
  return wr;
}

// Read and atomics: one-sided, the leader alone posts and waits for each
// completion (a full round trip).
[[gnu::hot, gnu::noinline]] RunResult onesided_latency(Side& side, std::uint64_t iters, Samples* samples,
                                                       const RunLimits& limits, SampleClock& clock) {
  const auto& spec = side.spec();
  const QueuePair& qp = side.qps()[0];
  const bool atomic = is_atomic(spec.op);
  ibv_sge sge{};
  ibv_send_wr wr = onesided_wr(side, sge);
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
    case Op::kWrite: r = pingpong<WriteTurn>(side, role, iterations, samples, limits, clock); break;
    case Op::kSend: r = pingpong<SendTurn>(side, role, iterations, samples, limits, clock); break;
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
