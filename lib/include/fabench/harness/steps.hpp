// The steps the timed loops are made of, shared by pair's latency, bandwidth
// and load loops, collbench's executor and kvbench's transfer: a stream's
// selective signalling (flag a WR, credit its completion), reaping one batch
// of completions, and the sender's half of a ping-pong turn (post, then reap
// down to the signalled WRs it may leave outstanding). Each is a few lines,
// always inlined into its loop (so a loop stays one compact stretch of code:
// docs/design/perftest-parity.md, "Code layout of the latency engines"); none
// allocates, logs, throws or dispatches virtually (DESIGN.md, "Hot path").
// Setup (WR chains, SGEs) happens before a loop; the steps change only the
// fields that change per message.
#pragma once

#include <infiniband/verbs.h>

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "fabench/harness/loop.hpp"
#include "fabench/verbs/cq.hpp"
#include "fabench/verbs/qp.hpp"

namespace fabench::harness {

// What a step reports: done, stalled (the Watchdog gave up), or why it failed.
// A failed completion is left in the step's wcs[0].
enum Step : int {
  kStepDone = 1,
  kStepStalled = 0,
  kStepFailedWc = -1,   // a completion with an error status, or a failed ibv_poll_cq
  kStepRepostFailed = -2,
  kStepPostFailed = -3,
};

// A stream's signalled WR carries (QP index << 32) | the WRs its completion retires.
[[nodiscard, gnu::always_inline]] inline std::uint64_t stream_wr_id(std::uint32_t q, std::uint64_t covered) noexcept {
  return (static_cast<std::uint64_t>(q) << 32) | covered;
}
[[nodiscard, gnu::always_inline]] inline std::uint32_t stream_qp(std::uint64_t wr_id) noexcept {
  return static_cast<std::uint32_t>(wr_id >> 32);
}
[[nodiscard, gnu::always_inline]] inline std::uint64_t stream_covered(std::uint64_t wr_id) noexcept {
  return wr_id & 0xffffffffULL;
}

// One QP's place in a stream of selectively signalled WRs (1-based positions).
struct StreamQp {
  std::uint64_t posted = 0;       // WRs posted
  std::uint64_t completed = 0;    // WRs retired by completions
  std::uint64_t last_signal = 0;  // position of the last signalled WR
};

// Flags the WR at position `seq` of QP `q`'s stream: a signalled one gets the
// stream wr_id covering every WR since the previous signalled one.
[[gnu::always_inline]] inline void flag_stream_wr(ibv_send_wr& wr, std::uint32_t base_flags, bool signaled,
                                                  std::uint32_t q, std::uint64_t seq, StreamQp& s) noexcept {
  wr.send_flags = base_flags | (signaled ? kSignaled : 0U);
  if (signaled) {
    wr.wr_id = stream_wr_id(q, seq - s.last_signal);
    s.last_signal = seq;
  }
}

// Polls `cq` once and hands each successful completion to on_wc(wc). Returns
// the completions taken, or kStepFailedWc (the failed one in wcs[0]; a failed
// poll leaves wcs[0].status IBV_WC_SUCCESS).
template <typename OnWc>
[[nodiscard, gnu::always_inline]] inline int reap_batch(const verbs::CompletionQueue& cq, std::span<ibv_wc> wcs,
                                                        OnWc on_wc) noexcept {
  const int n = cq.poll(wcs);
  if (n < 0) [[unlikely]] {
    wcs[0].status = IBV_WC_SUCCESS;
    return kStepFailedWc;
  }
  for (int k = 0; k < n; ++k) {
    const ibv_wc& wc = wcs[static_cast<std::size_t>(k)];
    if (wc.status != IBV_WC_SUCCESS) [[unlikely]] {
      wcs[0] = wc;
      return kStepFailedWc;
    }
    on_wc(wc);
  }
  return n;
}

// A stream's reap: credits each signalled completion's WRs to its QP and to
// `done`. Returns reap_batch's value.
[[nodiscard, gnu::always_inline]] inline int reap_stream(const verbs::CompletionQueue& cq, std::span<ibv_wc> wcs,
                                                         StreamQp* qps, std::uint64_t& done) noexcept {
  return reap_batch(cq, wcs, [&](const ibv_wc& wc) __attribute__((always_inline)) {
    const std::uint64_t covered = stream_covered(wc.wr_id);
    qps[stream_qp(wc.wr_id)].completed += covered;
    done += covered;
  });
}

// The sender's half of a ping-pong turn: posts `wr` (signalled or not) and,
// once more than `keep` signalled WRs are outstanding, reaps down to `keep`
// (harness::reap_signaled). Returns a Step; kStepPostFailed leaves the
// post's error number in post_rc.
template <typename Progress>
[[nodiscard, gnu::always_inline]] inline int post_turn(const verbs::QueuePair& qp, ibv_send_wr& wr,
                                                       std::uint32_t base_flags, bool signaled,
                                                       const verbs::CompletionQueue& cq, bool events,
                                                       std::span<ibv_wc> wcs, std::uint64_t& signals_out,
                                                       std::uint64_t keep, Watchdog& w, Progress progress,
                                                       int& post_rc) noexcept {
  wr.send_flags = base_flags | (signaled ? kSignaled : 0U);
  if (post_rc = qp.post_send(wr); post_rc != 0) [[unlikely]]
    return kStepPostFailed;
  if (!signaled || ++signals_out <= keep) return kStepDone;
  return reap_signaled(cq, events, wcs, signals_out, keep, w, progress);
}

// The completion to report for a failed one: a flush (IBV_WC_WR_FLUSH_ERR)
// only says that its QP is in the error state, so the CQ is drained (off the
// hot path, once the loop has given up; at most `max_polls` polls) for a
// failure that is not a flush, on the same QP first, else on any; `failed`
// when there is none. What is drained is lost (the run is over).
// first_failure_in: the same over any `poll(std::span<ibv_wc>) -> int`.
template <typename Poll>
[[nodiscard]] ibv_wc first_failure_in(const ibv_wc& failed, Poll poll, int max_polls = 64) {
  if (failed.status != IBV_WC_WR_FLUSH_ERR) return failed;
  ibv_wc other = failed;  // the first failure, not a flush, of another QP
  std::array<ibv_wc, kPollBatch> wcs{};
  for (int round = 0; round < max_polls; ++round) {
    const int n = poll(std::span<ibv_wc>(wcs));
    if (n <= 0) break;
    for (int k = 0; k < n; ++k) {
      const ibv_wc& wc = wcs[static_cast<std::size_t>(k)];
      if (wc.status == IBV_WC_SUCCESS || wc.status == IBV_WC_WR_FLUSH_ERR) continue;
      if (wc.qp_num == failed.qp_num) return wc;
      if (other.status == IBV_WC_WR_FLUSH_ERR) other = wc;
    }
  }
  return other;
}
[[nodiscard, gnu::cold]] ibv_wc first_failure(const verbs::CompletionQueue& cq, const ibv_wc& failed) noexcept;
// The one line of a failed completion (verbs::completion_error), saying so
// when it is a flush with no failure of its own before it.
[[nodiscard, gnu::cold]] std::string failure_text(const ibv_wc& wc, std::string_view qp_description);

}  // namespace fabench::harness
