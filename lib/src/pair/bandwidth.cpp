// The bandwidth and message-rate engine (run_bandwidth): its setup (the WR
// chains), its steps (post a window, reap the send CQ, drain the receive CQ,
// an idle pass) and the loop that strings them together.
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
using harness::now_ns;
using harness::StreamQp;
using harness::Watchdog;

// ------------------------------------------------------------- bandwidth --

// Setup, before the loop: per QP a chain of post_list WRs sharing one SGE
// (reads land in the rx slot; writes and sends come from the tx slot), and
// its share of the messages. In the loop only send_flags, the wr_id of
// signalled WRs and the chain's end change.
struct Chains {
  std::vector<ibv_sge> sges;
  std::vector<ibv_send_wr> wrs;  // QP q's chain: [q * post_list, (q + 1) * post_list)
  std::vector<StreamQp> qps;
  std::vector<std::uint64_t> target;  // messages QP q sends
};

Chains build_chains(const Side& side, std::uint64_t iterations, bool sends) {
  const auto& spec = side.spec();
  const auto nq = static_cast<std::uint32_t>(side.qps().size());
  const std::uint32_t plist = spec.post_list;
  Chains c{std::vector<ibv_sge>(nq), std::vector<ibv_send_wr>(static_cast<std::size_t>(nq) * plist),
           std::vector<StreamQp>(nq), std::vector<std::uint64_t>(nq, 0)};
  for (std::uint32_t q = 0; q < nq; ++q) {
    const std::byte* local = spec.op == Op::kRead ? side.rx(q) : side.tx(q);
    c.sges[q] = side.sge(q, local, static_cast<std::uint32_t>(spec.msg_bytes));
    if (sends) c.target[q] = iterations / nq + (q < iterations % nq ? 1 : 0);
    for (std::uint32_t k = 0; k < plist; ++k) {
      ibv_send_wr& wr = c.wrs[q * plist + k];
      wr = ibv_send_wr{};
      wr.opcode = opcode_of(spec.op);
      wr.sg_list = &c.sges[q];
      wr.num_sge = 1;
      wr.next = k + 1 < plist ? &c.wrs[q * plist + k + 1] : nullptr;
      if (spec.op == Op::kWrite) {
        wr.wr.rdma.remote_addr = side.remote_rx(q);
        wr.wr.rdma.rkey = side.remote()[q].rkey;
      } else if (spec.op == Op::kRead) {
        wr.wr.rdma.remote_addr = side.remote()[q].addr;
        wr.wr.rdma.rkey = side.remote()[q].rkey;
      } else if (spec.transport == IBV_QPT_UD) {
        side.ahs()[q].address(wr);
      }
    }
  }
  return c;
}

// Post step: fills QP q's window with chains of up to post_list WRs, each
// WR signalled every cq_mod and at the QP's last. Returns whether anything
// was posted, or kStepPostFailed (the error number in post_rc).
[[nodiscard, gnu::always_inline]] inline int post_window(const Side& side, Chains& c, std::uint32_t q,
                                                         std::uint32_t base_flags, int& post_rc) noexcept {
  const auto& spec = side.spec();
  const std::uint32_t plist = spec.post_list;
  StreamQp& s = c.qps[q];
  const std::uint64_t target = c.target[q];
  int posted_any = 0;
  while (s.posted < target && s.posted - s.completed + plist <= spec.tx_depth) {
    const auto n = static_cast<std::uint32_t>(std::min<std::uint64_t>(plist, target - s.posted));
    ibv_send_wr* chain = &c.wrs[q * plist];
    for (std::uint32_t k = 0; k < n; ++k) {
      const std::uint64_t seq = s.posted + k + 1;  // 1-based position in this QP's stream
      harness::flag_stream_wr(chain[k], base_flags, seq % spec.cq_mod == 0 || seq == target, q, seq, s);
    }
    chain[n - 1].next = nullptr;
    ibv_send_wr* bad = nullptr;
    post_rc = side.qps()[q].post_send(*chain, bad);
    if (n < plist) chain[n - 1].next = &chain[n];
    if (post_rc != 0) [[unlikely]]
      return harness::kStepPostFailed;
    s.posted += n;
    posted_any = 1;
  }
  return posted_any;
}

// Receive step: takes receive completions and reposts their receives, batch
// after batch while they come back full, up to a queue's depth, before the
// next sends are posted. A side that also sends (bidirectional) posts up to a
// window of sends per pass; reposting only one batch per pass let the peer's
// messages use up the receive queue: RNR NAKs, then the peer waits out its
// RNR timer (rxe's send_rnr_err counted it). Returns the receives taken or a
// failed Step.
[[nodiscard, gnu::always_inline]] inline int drain_receives(Side& side, RecvRing& ring,
                                                            std::span<ibv_wc> wcs) noexcept {
  auto& rx_posted = side.run_state().rx_posted;
  std::uint32_t drained = 0;
  int n = 0;
  bool repost_failed = false;
  do {
    n = harness::reap_batch(
        side.recv_cq(), wcs, [&](const ibv_wc& wc) __attribute__((always_inline)) {
          const auto q = static_cast<std::uint32_t>(wc.wr_id);
          --rx_posted[q];
          if (ring.post(side, q) != 0) [[unlikely]]
            repost_failed = true;
          else ++rx_posted[q];
        });
    if (repost_failed) [[unlikely]]
      return harness::kStepRepostFailed;
    if (n < 0) [[unlikely]]
      return n;
    drained += static_cast<std::uint32_t>(n);
  } while (n == kPollBatch && drained < side.spec().rx_depth);
  return static_cast<int>(drained);
}

// What a pass of the loop decided beyond posting and reaping.
enum class Pass : std::uint8_t { kGoOn, kRetry, kEnd, kStalled, kArmFailed, kWaitFailed };

// The waiting half of the loop: the Watchdog, event mode's armed CQ and the
// quiet period that ends an unreliable receiver's run.
struct Waits {
  // UC and UD have no flow control: what finds no receive posted is dropped,
  // so their receiver stops after a quiet period instead of waiting for
  // every message (the leader reports the loss).
  static constexpr std::uint64_t kQuietNs = 20'000'000ULL;
  static constexpr std::uint64_t kLeaderQuietNs = 500'000'000ULL;

  const Side& side;
  const RunLimits& limits;
  const bool unreliable;
  const bool receives;
  // The channel every 10 ms, moving or not: not a latency sample.
  Watchdog w{limits.stall, watched(limits), harness::kControlPollNs, limits.keepalive};
  const verbs::CompletionQueue* armed = nullptr;
  std::uint64_t t_last_rx = 0;

  // After a pass that posted or reaped (UC and UD sends complete locally
  // whether or not anyone listens): the driver's channel is still looked at,
  // so a leader that closed its connection or went silent ends the run here
  // too; a leader's Keepalives go on.
  [[nodiscard, gnu::always_inline]] Pass busy(std::uint64_t progress) noexcept {
    if ((watched(limits) != nullptr || limits.keepalive != nullptr) && w.stalled(progress, Watchdog::kBusyPassSpins) &&
        w.peer_lost()) [[unlikely]]
      return Pass::kStalled;
    return Pass::kGoOn;
  }
  // After a pass that found nothing to do.
  // tx_owed, rx_owed: send completions, receives still to come; rx_seen: any received.
  [[nodiscard, gnu::always_inline]] Pass idle(bool tx_owed, bool rx_owed, bool rx_seen,
                                              std::uint64_t progress) noexcept {
    if (unreliable && receives && !tx_owed && w.due()) {
      if (limits.leader != nullptr) {
        // The leader is done sending ("finish" waits on the control channel):
        // take what is still arriving until the receive CQ has been quiet for
        // a while, then stop.
        if (w.peer_done() && (t_last_rx == 0 || now_ns() - t_last_rx > kQuietNs)) return Pass::kEnd;
      } else if (rx_seen && now_ns() - t_last_rx > kLeaderQuietNs) {
        // Leader of a bidirectional run: no one tells it when the follower is
        // done, so a long silence after its own sends ends the run.
        return Pass::kEnd;
      }
    }
    if (side.spec().events) {
      // Event mode: arm the CQ that still owes completions, poll once more (a
      // completion that beat the arm raises no event), then block.
      const auto& cq = tx_owed ? side.send_cq() : side.recv_cq();
      if (armed != &cq) {
        if (cq.arm() != 0) [[unlikely]]
          return Pass::kArmFailed;
        armed = &cq;
        return Pass::kRetry;
      }
      // With two CQs in play (bidirectional send) wake up often enough to
      // serve the one not armed.
      if (cq.wait_event(tx_owed && rx_owed ? 1 : 100) < 0) [[unlikely]]
        return Pass::kWaitFailed;
      armed = nullptr;
    }
    return (side.spec().events ? w.stalled_now(progress) : w.stalled(progress)) ? Pass::kStalled : Pass::kGoOn;
  }
};

// The one line of a failed step or pass (cold: the loop leaves at once).
[[gnu::cold, gnu::noinline]] RunResult bw_failure(int step, Pass pass, const Side& side, const ibv_wc& wc,
                                                  const char* cq_name) {
  if (pass == Pass::kArmFailed) return fail("ibv_req_notify_cq failed");
  if (pass == Pass::kWaitFailed) return fail("waiting for a completion event failed");
  if (step == harness::kStepRepostFailed) return fail("ibv_post_recv failed while reposting a receive");
  if (wc.status == IBV_WC_SUCCESS) return fail(fmt::format("ibv_poll_cq failed on the {} CQ", cq_name));
  return completion_failure(side, wc);
}

RunResult stream_result(double seconds, std::uint64_t messages, std::uint64_t bytes, std::uint64_t received) {
  RunResult r;
  r.seconds = seconds;
  r.messages = messages;
  r.bytes = bytes;
  r.received = received;
  return r;
}

}  // namespace

RunResult run_bandwidth(Side& side, Role role, std::uint64_t iterations, const RunLimits& limits) {
  const auto& spec = side.spec();
  const bool sends = initiates(spec, role);
  const bool receives = spec.op == Op::kSend && (spec.bidirectional || !sends);
  if (!sends && !receives) return {};
  Chains c = build_chains(side, iterations, sends);
  const auto nq = static_cast<std::uint32_t>(side.qps().size());
  const std::uint32_t base_flags = send_flags_for(side, spec.msg_bytes, opcode_of(spec.op));
  const std::uint64_t tx_total = sends ? iterations : 0;
  const std::uint64_t rx_total = receives ? iterations : 0;
  RecvRing ring(side);
  std::array<ibv_wc, kPollBatch> wcs{};
  std::uint64_t tx_done = 0;
  std::uint64_t rx_done = 0;
  int post_rc = 0;
  Waits waits{side, limits, spec.transport != IBV_QPT_RC, receives};
  const std::uint64_t t_start = now_ns();
  std::uint64_t t_end = t_start;
  while (tx_done < tx_total || rx_done < rx_total) {
    bool idle = true;
    for (std::uint32_t q = 0; q < nq; ++q) {
      const int r = post_window(side, c, q, base_flags, post_rc);
      if (r < 0) [[unlikely]]
        return fail(side.qps()[q].send_error(post_rc, c.wrs[q * spec.post_list]).what());
      idle = idle && r == 0;
    }
    if (tx_done < tx_total) {
      const int n = harness::reap_stream(side.send_cq(), wcs, c.qps.data(), tx_done);
      if (n < 0) [[unlikely]]
        return bw_failure(n, Pass::kGoOn, side, wcs[0], "send");
      if (n > 0) {
        idle = false;
        if (tx_done == tx_total) t_end = now_ns();
      }
    }
    if (rx_done < rx_total) {
      const int n = drain_receives(side, ring, wcs);
      if (n < 0) [[unlikely]]
        return bw_failure(n, Pass::kGoOn, side, wcs[0], "receive");
      if (n > 0) {
        rx_done += static_cast<std::uint64_t>(n);
        idle = false;
        if (waits.unreliable) waits.t_last_rx = now_ns();
      }
    }
    const Pass pass = idle ? waits.idle(tx_done < tx_total, rx_done<rx_total, rx_done> 0, tx_done + rx_done)
                           : waits.busy(tx_done + rx_done);
    if (pass == Pass::kGoOn || pass == Pass::kRetry) continue;
    if (pass == Pass::kEnd) break;
    if (pass != Pass::kStalled) [[unlikely]]
      return bw_failure(0, pass, side, wcs[0], "");
    return stall_failure(waits.w, limits, tx_done < tx_total ? "send completions" : "the peer's messages",
                         tx_done + rx_done, tx_total + rx_total);
  }
  return stream_result(static_cast<double>((tx_total > 0 ? t_end : now_ns()) - t_start) / 1e9, tx_total,
                       tx_total * spec.msg_bytes, rx_done);
}

}  // namespace fabench::pair
