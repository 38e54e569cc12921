// The wait of fabench-congest's loops: poll until `done()`, through the one wait primitive
// (harness/wait.hpp), and turn its verdict into the phase's error.
#pragma once

#include <string>

#include <fmt/format.h>

#include "fabench/congestbench/session.hpp"
#include "fabench/world/driver.hpp"

namespace fabench::congestbench::detail {

// A wait that ended without its condition: r says why (a control event, a stall, the limit).
inline void wait_failed(const world::Waiter& waiter, world::Waiter::Verdict verdict, PhaseResult& r,
                        const char* what) {
  r.ok = false;
  if (verdict == world::Waiter::Verdict::kControl) {
    r.control_event = true;
    r.channel_index = waiter.channel_index();
    r.channel_closed = waiter.channel_closed();
    r.error = fmt::format("stopped while waiting for {}", what);
  } else {
    r.error = fmt::format("no progress for {:.0f} s waiting for {}", waiter.stall_seconds(), what);
  }
}

// poll(): the completions seen, or -1 with r.error set. false when the wait failed (r says why).
template <typename Done, typename Poll>
[[gnu::always_inline]] inline bool wait_until(world::Waiter& waiter, PhaseResult& r, const char* what, Done&& done,
                                              Poll&& poll) {
  while (!done()) {
    const int n = poll();
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
    wait_failed(waiter, verdict, r, what);
    return false;
  }
  return true;
}

}  // namespace fabench::congestbench::detail
