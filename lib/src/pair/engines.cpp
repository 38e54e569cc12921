#include "fabench/pair/engines.hpp"

#include <algorithm>
#include <array>
#include <vector>

#include <fmt/format.h>

#include "fabench/harness/clock.hpp"
#include "fabench/harness/loop.hpp"
#include "fabench/verbs/error.hpp"

namespace fabench::pair {

namespace {

using verbs::QueuePair;

using harness::now_ns;
using harness::reap_signaled;
using harness::SampleClock;
using harness::Samples;
using harness::wait_cq;
using harness::Watchdog;

using harness::kPollBatch;
using harness::kSignaled;

RunResult fail(std::string text) {
  RunResult r;
  r.ok = false;
  r.error = std::move(text);
  return r;
}

RunResult completion_failure(const Side& side, const ibv_wc& wc) {
  std::string qp = fmt::format("qp 0x{:x}", wc.qp_num);
  for (const auto& q : side.qps()) {
    if (q.qpn() == wc.qp_num) qp = q.describe();
  }
  return fail(verbs::completion_error(wc, qp).what());
}

RunResult stall_failure(const Watchdog& w, const RunLimits& limits, std::string_view waiting_for, std::uint64_t done,
                        std::uint64_t total) {
  // The watched end: the leader (this side follows) or the follower (this side leads).
  const std::string_view who = limits.leader != nullptr ? "the leader" : "the peer";
  RunResult r;
  if (w.peer_gone()) {
    r = fail(
        fmt::format("{} closed its control connection (died or gave up) while this side waited for {} "
                    "({} of {} done)",
                    who, waiting_for, done, total));
  } else if (w.peer_silent()) {
    r = fail(
        fmt::format("{} sent nothing for {:.0f} s (stopped or unreachable) while this side waited for {} "
                    "({} of {} done)",
                    who, w.silence_seconds(), waiting_for, done, total));
  } else if (w.peer_done()) {
    return fail(fmt::format("{} ended its run while this side still waited for {} ({} of {} done)", who, waiting_for,
                            done, total));
  } else {
    return fail(fmt::format("no progress for {:.0f} s while waiting for {} ({} of {} done); peer dead or fabric down?",
                            w.stall_seconds(), waiting_for, done, total));
  }
  r.peer_lost = true;
  return r;
}

// How often a latency loop that moves looks at the watched channel: the
// leader's samples are the measurement, so rarely there.
std::uint64_t busy_poll_ns(const RunLimits& limits) noexcept {
  return limits.follower != nullptr ? Watchdog::kBusyPollLongNs : harness::kControlPollNs;
}

// The control channel a run's Watchdog looks at, if any.
ctrl::Channel* watched(const RunLimits& limits) noexcept {
  return limits.leader != nullptr ? limits.leader : limits.follower;
}

std::uint32_t send_flags_for(const Side& side, std::uint64_t bytes, ibv_wr_opcode opcode) {
  const bool can_inline = opcode == IBV_WR_RDMA_WRITE || opcode == IBV_WR_SEND || opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
  return (can_inline && bytes <= side.inline_threshold() && bytes > 0) ? static_cast<std::uint32_t>(IBV_SEND_INLINE)
                                                                       : 0U;
}

ibv_wr_opcode opcode_of(Op op) {
  switch (op) {
    case Op::kWrite: return IBV_WR_RDMA_WRITE;
    case Op::kSend: return IBV_WR_SEND;
    case Op::kRead: return IBV_WR_RDMA_READ;
    case Op::kFetchAdd: return IBV_WR_ATOMIC_FETCH_AND_ADD;
    case Op::kCompSwap: return IBV_WR_ATOMIC_CMP_AND_SWP;
  }
  return IBV_WR_SEND;
}

// One prebuilt receive WR per QP, reposted as its completions arrive.
struct RecvRing {
  std::vector<ibv_sge> sges;
  std::vector<ibv_recv_wr> wrs;

  explicit RecvRing(const Side& side) : sges(side.qps().size()), wrs(side.qps().size()) {
    const auto& spec = side.spec();
    const auto len = static_cast<std::uint32_t>(spec.msg_bytes + (spec.transport == IBV_QPT_UD ? kGrhBytes : 0));
    for (std::uint32_t q = 0; q < side.qps().size(); ++q) {
      sges[q] = side.sge(q, side.rx(q), len);
      wrs[q] = ibv_recv_wr{};
      wrs[q].wr_id = q;
      wrs[q].sg_list = &sges[q];
      wrs[q].num_sge = 1;
    }
  }
  int post(const Side& side, std::uint32_t q) noexcept { return side.qps()[q].post_recv(wrs[q]); }
};

// ---------------------------------------------------------------- latency --

// How many signaled sends a ping-pong leaves outstanding when it goes on to
// wait for the peer. RC (tx depth >= 2): one; its completion comes with the
// responder's ACK, which arrives with or after the reply, and waiting for it
// first would put the ACK on the round trip. UC and UD, and -t 1: none;
// their completions are the local provider's (the rxe completer runs once
// the packet is sent); waited for at once, as perftest waits for every
// latency send's completion, that work most likely overlaps the message's
// flight instead of landing after the reply. Measured in the test bed, not
// traced (docs/performance.md, "Verdicts with a 95 % interval").
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

RunResult write_pingpong(Side& side, Role role, std::uint64_t iters, Samples* samples, const RunLimits& limits,
                         SampleClock& clock) {
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
  Watchdog w(limits.stall, watched(limits), busy_poll_ns(limits));
  const bool leader = role == Role::kLeader;

  auto progress = [&] { return i; };
  // Send completions until at most `limit` signaled WRs are outstanding.
  auto reap_until = [&](std::uint64_t limit) {
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
  }
  (void)clock.stop();
  if (const int r = reap_until(0); r <= 0) {
    return r < 0 ? completion_failure(side, wcs[0]) : stall_failure(w, limits, "the last send completion", i, iters);
  }
  return pingpong_result(iters, msg);
}

RunResult send_pingpong(Side& side, Role role, std::uint64_t iters, Samples* samples, const RunLimits& limits,
                        SampleClock& clock) {
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
  Watchdog w(limits.stall, watched(limits), busy_poll_ns(limits));
  const bool leader = role == Role::kLeader;
  auto progress = [&] { return i; };

  // Waits for one receive completion (send completions are reaped on the way).
  auto await_recv = [&]() -> int {
    for (;;) {
      const int n = wait_cq(side.recv_cq(), spec.events, std::span(wcs.data(), 1), w, progress);
      if (n <= 0) return n;
      if (wcs[0].status != IBV_WC_SUCCESS) return -1;
      --posted[0];
      if (ring.post(side, 0) != 0) return -2;
      ++posted[0];
      return 1;
    }
  };
  const std::uint64_t keep_signaled = signaled_to_keep(spec);
  auto reap_until = [&](std::uint64_t limit) {
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
  }
  (void)clock.stop();
  if (const int r = reap_until(0); r <= 0) {
    return r < 0 ? completion_failure(side, wcs[0]) : stall_failure(w, limits, "the last send completion", i, iters);
  }
  return pingpong_result(iters, msg);
}

// Read and atomics: one-sided, the leader alone posts and waits for each
// completion (a full round trip).
RunResult onesided_latency(Side& side, std::uint64_t iters, Samples* samples, const RunLimits& limits,
                           SampleClock& clock) {
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
  Watchdog w(limits.stall, watched(limits), busy_poll_ns(limits));
  auto progress = [&] { return i; };

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
  }
  (void)clock.stop();
  RunResult r;
  r.messages = iters;
  r.bytes = iters * (atomic ? kAtomicBytes : spec.msg_bytes);
  r.wrong = wrong;
  return r;
}

}  // namespace

RunResult prepare_run(Side& side, Role role) {
  const auto& spec = side.spec();
  if (spec.kind == Kind::kLatency && spec.op == Op::kWrite) {
    // No write is in flight between runs: each ended with the last reply seen.
    *(side.rx(0) + spec.msg_bytes - 1) = std::byte{0};
  }
  const bool receives = spec.op == Op::kSend &&
                        (spec.kind == Kind::kLatency || spec.bidirectional || !initiates(spec, role));
  if (receives) {
    RecvRing ring(side);
    auto& posted = side.run_state().rx_posted;
    for (std::uint32_t q = 0; q < side.qps().size(); ++q) {
      while (posted[q] < spec.rx_depth) {
        if (const int rc = ring.post(side, q); rc != 0) {
          return fail(side.qps()[q].recv_error(rc, ring.wrs[q]).what());
        }
        ++posted[q];
      }
    }
  }
  return {};
}

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

// ------------------------------------------------------------- bandwidth --

RunResult run_bandwidth(Side& side, Role role, std::uint64_t iterations, const RunLimits& limits) {
  const auto& spec = side.spec();
  const bool sends = initiates(spec, role);
  const bool receives = spec.op == Op::kSend && (spec.bidirectional || !sends);
  if (!sends && !receives) return {};

  const auto nq = static_cast<std::uint32_t>(side.qps().size());
  const std::uint32_t plist = spec.post_list;
  const auto msg = static_cast<std::uint32_t>(spec.msg_bytes);
  const ibv_wr_opcode opcode = opcode_of(spec.op);
  const std::uint32_t base_flags = send_flags_for(side, msg, opcode);
  const bool ud = spec.transport == IBV_QPT_UD;
  const bool unreliable = spec.transport != IBV_QPT_RC;

  // Prebuilt: per QP a chain of post_list WRs sharing one SGE. Reads land in
  // the rx slot; writes and sends come from the tx slot.
  std::vector<ibv_sge> sges(nq);
  std::vector<ibv_send_wr> wrs(static_cast<std::size_t>(nq) * plist);
  std::vector<std::uint64_t> target(nq), posted(nq, 0), completed(nq, 0), last_signal(nq, 0);
  for (std::uint32_t q = 0; q < nq; ++q) {
    const std::byte* local = spec.op == Op::kRead ? side.rx(q) : side.tx(q);
    sges[q] = side.sge(q, local, msg);
    target[q] = iterations / nq + (q < iterations % nq ? 1 : 0);
    for (std::uint32_t k = 0; k < plist; ++k) {
      ibv_send_wr& wr = wrs[q * plist + k];
      wr = ibv_send_wr{};
      wr.opcode = opcode;
      wr.sg_list = &sges[q];
      wr.num_sge = 1;
      wr.next = k + 1 < plist ? &wrs[q * plist + k + 1] : nullptr;
      if (spec.op == Op::kWrite) {
        wr.wr.rdma.remote_addr = side.remote_rx(q);
        wr.wr.rdma.rkey = side.remote()[q].rkey;
      } else if (spec.op == Op::kRead) {
        wr.wr.rdma.remote_addr = side.remote()[q].addr;
        wr.wr.rdma.rkey = side.remote()[q].rkey;
      } else if (ud) {
        side.ahs()[q].address(wr);
      }
    }
  }
  if (!sends) std::fill(target.begin(), target.end(), 0);
  const std::uint64_t tx_total = sends ? iterations : 0;
  // UC and UD have no flow control: what finds no receive posted is dropped,
  // so their receiver stops after a quiet period instead of waiting for
  // every message (the leader reports the loss).
  const std::uint64_t rx_total = receives ? iterations : 0;
  RecvRing ring(side);
  auto& rx_posted = side.run_state().rx_posted;

  std::array<ibv_wc, kPollBatch> wcs{};
  std::uint64_t tx_done = 0;
  std::uint64_t rx_done = 0;
  Watchdog w(limits.stall, watched(limits));  // the channel every 10 ms, moving or not: not a latency sample
  auto progress = [&] { return tx_done + rx_done; };
  std::uint64_t t_last_rx = 0;
  const std::uint64_t quiet_ns = 20'000'000ULL;
  const std::uint64_t leader_quiet_ns = 500'000'000ULL;
  const verbs::CompletionQueue* armed = nullptr;

  const std::uint64_t t_start = now_ns();
  std::uint64_t t_end = t_start;
  while (tx_done < tx_total || rx_done < rx_total) {
    bool idle = true;
    // Post: fill each QP's window with chains of up to post_list WRs.
    for (std::uint32_t q = 0; q < nq; ++q) {
      while (posted[q] < target[q] && posted[q] - completed[q] + plist <= spec.tx_depth) {
        const auto n = static_cast<std::uint32_t>(std::min<std::uint64_t>(plist, target[q] - posted[q]));
        ibv_send_wr* chain = &wrs[q * plist];
        for (std::uint32_t k = 0; k < n; ++k) {
          const std::uint64_t seq = posted[q] + k + 1;  // 1-based position in this QP's stream
          const bool signaled = seq % spec.cq_mod == 0 || seq == target[q];
          chain[k].send_flags = base_flags | (signaled ? kSignaled : 0U);
          if (signaled) {
            // wr_id: QP index in the high half, WRs this completion retires in the low.
            chain[k].wr_id = (static_cast<std::uint64_t>(q) << 32) | (seq - last_signal[q]);
            last_signal[q] = seq;
          }
        }
        chain[n - 1].next = nullptr;
        ibv_send_wr* bad = nullptr;
        const int rc = side.qps()[q].post_send(*chain, bad);
        if (n < plist) chain[n - 1].next = &chain[n];
        if (rc != 0) [[unlikely]]
          return fail(side.qps()[q].send_error(rc, *chain).what());
        posted[q] += n;
        idle = false;
      }
    }
    // Reap send completions.
    if (tx_done < tx_total) {
      const int n = side.send_cq().poll(wcs);
      if (n < 0) [[unlikely]]
        return fail("ibv_poll_cq failed on the send CQ");
      for (int k = 0; k < n; ++k) {
        if (wcs[k].status != IBV_WC_SUCCESS) [[unlikely]]
          return completion_failure(side, wcs[k]);
        const auto q = static_cast<std::uint32_t>(wcs[k].wr_id >> 32);
        const std::uint64_t covered = wcs[k].wr_id & 0xffffffffULL;
        completed[q] += covered;
        tx_done += covered;
      }
      if (n > 0) {
        idle = false;
        if (tx_done == tx_total) t_end = now_ns();
      }
    }
    // Receive and repost, draining the receive CQ (batch after batch while
    // they come back full, up to a queue's depth) before the next sends are
    // posted. A side that also sends (bidirectional) posts up to a window of
    // sends per pass; reposting only one batch per pass let the peer's
    // messages use up the receive queue: RNR NAKs, then the peer waits out
    // its RNR timer (rxe's send_rnr_err counted it).
    if (rx_done < rx_total) {
      std::uint32_t drained = 0;
      int n = 0;
      do {
        n = side.recv_cq().poll(wcs);
        if (n < 0) [[unlikely]]
          return fail("ibv_poll_cq failed on the receive CQ");
        for (int k = 0; k < n; ++k) {
          if (wcs[k].status != IBV_WC_SUCCESS) [[unlikely]]
            return completion_failure(side, wcs[k]);
          const auto q = static_cast<std::uint32_t>(wcs[k].wr_id);
          --rx_posted[q];
          if (ring.post(side, q) != 0) [[unlikely]]
            return fail("ibv_post_recv failed while reposting a receive");
          ++rx_posted[q];
        }
        drained += static_cast<std::uint32_t>(n);
      } while (n == kPollBatch && drained < spec.rx_depth);
      if (drained > 0) {
        rx_done += drained;
        idle = false;
        if (unreliable) t_last_rx = now_ns();
      }
    }
    if (!idle) {
      // Busy (UC and UD sends complete locally whether or not anyone listens):
      // the driver's channel is still looked at, so a leader that closed its
      // connection or went silent ends the run here too.
      if (watched(limits) != nullptr && w.stalled(progress()) && w.peer_lost()) [[unlikely]] {
        return stall_failure(w, limits, tx_done < tx_total ? "send completions" : "the peer's messages",
                             tx_done + rx_done, tx_total + rx_total);
      }
    } else {
      if (unreliable && receives && tx_done == tx_total && w.due()) {
        if (limits.leader != nullptr) {
          // The leader is done sending ("finish" waits on the control
          // channel): take what is still arriving until the receive CQ has
          // been quiet for a while, then stop.
          if (w.peer_done() && (t_last_rx == 0 || now_ns() - t_last_rx > quiet_ns)) break;
        } else if (rx_done > 0 && now_ns() - t_last_rx > leader_quiet_ns) {
          // Leader of a bidirectional run: no one tells it when the follower
          // is done, so a long silence after its own sends ends the run.
          break;
        }
      }
      if (spec.events) {
        // Event mode: arm the CQ that still owes completions, poll once more
        // (a completion that beat the arm raises no event), then block.
        const auto& cq = tx_done < tx_total ? side.send_cq() : side.recv_cq();
        if (armed != &cq) {
          if (cq.arm() != 0) [[unlikely]]
            return fail("ibv_req_notify_cq failed");
          armed = &cq;
          continue;
        }
        // With two CQs in play (bidirectional send) wake up often enough
        // to serve the one not armed.
        const int ev = cq.wait_event(tx_done < tx_total && rx_done < rx_total ? 1 : 100);
        if (ev < 0) [[unlikely]]
          return fail("waiting for a completion event failed");
        armed = nullptr;
      }
      if (spec.events ? w.stalled_now(progress()) : w.stalled(progress())) [[unlikely]] {
        return stall_failure(w, limits, tx_done < tx_total ? "send completions" : "the peer's messages",
                             tx_done + rx_done, tx_total + rx_total);
      }
    }
  }
  RunResult r;
  r.seconds = static_cast<double>((tx_total > 0 ? t_end : now_ns()) - t_start) / 1e9;
  r.messages = tx_total;
  r.bytes = tx_total * msg;
  r.received = rx_done;
  return r;
}

std::uint64_t check_payload(const Side& side, Role role, std::uint64_t iterations) {
  const auto& spec = side.spec();
  if (is_atomic(spec.op)) return 0;  // checked per operation in the loop
  bool receives = false;
  std::uint64_t n = spec.msg_bytes;
  std::uint64_t offset = 0;
  switch (spec.op) {
    case Op::kWrite:
      receives = spec.kind == Kind::kLatency || spec.bidirectional || !initiates(spec, role);
      if (spec.kind == Kind::kLatency) n -= 1;  // the last byte is the ping-pong flag
      break;
    case Op::kSend:
      receives = spec.kind == Kind::kLatency || spec.bidirectional || !initiates(spec, role);
      if (spec.transport == IBV_QPT_UD) offset = kGrhBytes;
      break;
    case Op::kRead: receives = initiates(spec, role); break;
    default: break;
  }
  if (!receives) return 0;
  const std::uint8_t peer_seed = role == Role::kLeader ? kFollowerSeed : kLeaderSeed;
  std::uint64_t wrong = 0;
  const std::uint64_t used = std::min<std::uint64_t>(side.qps().size(), iterations);
  for (std::uint32_t q = 0; q < used; ++q) {
    const std::byte* p = side.rx(q) + offset;
    for (std::uint64_t i = 0; i < n; ++i) {
      wrong += static_cast<std::uint8_t>(p[i]) != Side::pattern_byte(peer_seed, i) ? 1 : 0;
    }
  }
  return wrong;
}

}  // namespace fabench::pair
