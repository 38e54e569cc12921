// The bandwidth and message-rate engine (run_bandwidth).
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

using engine_util::completion_failure;
using engine_util::fail;
using engine_util::opcode_of;
using engine_util::RecvRing;
using engine_util::send_flags_for;
using engine_util::stall_failure;
using engine_util::watched;
using harness::kPollBatch;
using harness::kSignaled;
using harness::now_ns;
using harness::Watchdog;

}  // namespace

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
  // The channel every 10 ms, moving or not: not a latency sample.
  Watchdog w(limits.stall, watched(limits), harness::kControlPollNs, limits.keepalive);
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
      // connection or went silent ends the run here too; a leader's Keepalives go on.
      if ((watched(limits) != nullptr || limits.keepalive != nullptr) &&
          w.stalled(progress(), Watchdog::kBusyPassSpins) && w.peer_lost()) [[unlikely]] {
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

}  // namespace fabench::pair
