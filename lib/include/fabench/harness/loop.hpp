// Primitives of the timed loops every engine is built from: completion-queue
// waits over the one wait primitive (wait.hpp: the clocks and the Watchdog).
// All inline, none allocates, logs, throws or dispatches virtually, so they
// may sit inside a timed loop.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <span>

#include "fabench/harness/wait.hpp"
#include "fabench/verbs/cq.hpp"

namespace fabench::harness {

// Work completions taken per ibv_poll_cq call by the timed loops.
inline constexpr int kPollBatch = 16;
// IBV_SEND_SIGNALED as the unsigned that ibv_send_wr::send_flags holds.
inline constexpr auto kSignaled = static_cast<std::uint32_t>(IBV_SEND_SIGNALED);

// Waits for at least one completion on `cq`: busy polling, or (event mode)
// arm -> poll -> block on the channel. Returns n > 0, or -1 on a CQ error,
// or 0 when the watchdog says the loop stalled. `progress()` is the count
// the watchdog watches.
template <typename Progress>
[[nodiscard, gnu::always_inline]] inline int wait_cq(const verbs::CompletionQueue& cq, bool events,
                                                     std::span<ibv_wc> wcs, Watchdog& w, Progress progress) noexcept {
  for (;;) {
    int n = cq.poll(wcs);
    if (n != 0) return n;
    if (events) {
      if (cq.arm() != 0) return -1;
      n = cq.poll(wcs);  // completions that beat the arm raise no event
      if (n != 0) return n;
      const int ev = cq.wait_event(100);
      if (ev < 0) return -1;
      if (w.stalled_now(progress())) return 0;
      continue;
    }
    if (w.stalled(progress())) return 0;
  }
}

// Reaps signaled send completions (one per signaled WR) from `cq` until at
// most `limit` remain `outstanding`; polls at least once, so a limit of ~0
// reaps whatever has arrived without waiting. Returns 1 done, 0 stalled,
// -1 a failed poll or completion (the failed one in wcs[0]).
template <typename Progress>
[[nodiscard, gnu::always_inline]] inline int reap_signaled(const verbs::CompletionQueue& cq, bool events,
                                                           std::span<ibv_wc> wcs, std::uint64_t& outstanding,
                                                           std::uint64_t limit, Watchdog& w,
                                                           Progress progress) noexcept {
  int n = cq.poll(wcs);
  for (;;) {
    if (n < 0) return -1;
    for (int k = 0; k < n; ++k) {
      if (wcs[static_cast<std::size_t>(k)].status != IBV_WC_SUCCESS) [[unlikely]] {
        wcs[0] = wcs[static_cast<std::size_t>(k)];
        return -1;
      }
      --outstanding;
    }
    if (outstanding <= limit) return 1;
    n = wait_cq(cq, events, wcs, w, progress);
    if (n == 0) return 0;
  }
}

}  // namespace fabench::harness
