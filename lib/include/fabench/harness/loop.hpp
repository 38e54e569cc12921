// Primitives of the timed loops every engine is built from: the clock, the
// stall Watchdog, and completion-queue waits. All inline, none allocates,
// logs, throws or dispatches virtually, so they may sit inside a timed loop.
#pragma once

#include <infiniband/verbs.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <span>

#include "fabench/ctrl/channel.hpp"
#include "fabench/ctrl/heartbeat.hpp"
#include "fabench/verbs/cq.hpp"

namespace fabench::harness {

// CLOCK_MONOTONIC through the vDSO: no system call.
[[nodiscard]] inline std::uint64_t now_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ULL + static_cast<std::uint64_t>(ts.tv_nsec);
}

// CLOCK_MONOTONIC_COARSE: the time of the last scheduler tick (1-10 ms resolution), always read
// from the vDSO. CLOCK_MONOTONIC is a system call where the clocksource has no vDSO mode (the
// HPET of an emulated guest: about 2.2 us a read there, against 0.1 us for this one). For
// watchdogs, heartbeats and deadlines of seconds, never for timing: the same timebase as
// now_ns(), at most a tick behind it.
[[nodiscard]] inline std::uint64_t coarse_now_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ULL + static_cast<std::uint64_t>(ts.tv_nsec);
}

// The watched control channel is looked at no more often than this.
inline constexpr std::uint64_t kControlPollNs = 10'000'000;

// Work completions taken per ibv_poll_cq call by the timed loops.
inline constexpr int kPollBatch = 16;
// IBV_SEND_SIGNALED as the unsigned that ibv_send_wr::send_flags holds.
inline constexpr auto kSignaled = static_cast<std::uint32_t>(IBV_SEND_SIGNALED);

// Detects a stalled loop: no change of its progress count for the stall
// duration. Optionally it also watches the control channel of the rank that
// drives the run (a pair's leader), so that a driver that died, stopped or
// moved on ends the loop at once instead of after the stall:
//  - closed connection: the driver is gone (peer_gone);
//  - no frame (its Keepalives included) for the stall duration: it is stopped
//    or unreachable (peer_silent);
//  - a message waiting (say, its "finish"): its part is over (peer_done);
//    from then on, a second without progress counts as a stall.
// The clock is read once per `every` calls of stalled(), the channel at most
// every kControlPollNs. `every` adapts so that a check falls about every
// kCheckTargetNs of loop time: up to kWatchEvery spins where a spin is cheap
// (a poll of an empty CQ on real hardware), down to 1 where each is slow (a
// busy loop whose every post is a system call on a software device, as rxe's
// are): a count fixed at 4096 let a follower streaming UC sends to a killed
// client run on for minutes before it looked at the control channel.
class Watchdog {
 public:
  static constexpr std::uint32_t kWatchEvery = 1U << 12;
  static constexpr std::uint64_t kCheckTargetNs = 1'000'000;

  // The channel is looked at every kControlPollNs while the loop waits
  // without progress, and every `busy_poll` while it moves: kControlPollNs
  // by default, so that a busy loop (UC sends complete whether or not anyone
  // listens) notices a closed channel at once; a timed latency loop passes
  // more (kBusyPollLongNs), so that a system call lands in a sample rarely.
  static constexpr std::uint64_t kBusyPollLongNs = 500'000'000;
  //
  // `pulse`: beaten at each clock read, so that the peer of a process that
  // keeps no heartbeat thread (a pair's leader) hears its Keepalives while
  // this loop runs.
  explicit Watchdog(std::chrono::milliseconds stall, ctrl::Channel* watched = nullptr,
                    std::uint64_t busy_poll_ns = kControlPollNs, ctrl::Pulse* pulse = nullptr) noexcept
      : stall_ns_(static_cast<std::uint64_t>(stall.count()) * 1'000'000ULL),
        silence_ns_(stall_ns_),
        deadline_(now_ns() + stall_ns_),
        last_check_(deadline_ - stall_ns_),
        watched_(watched),
        busy_poll_ns_(busy_poll_ns),
        pulse_(pulse) {}

  // A pass of a loop that posted or reaped work counts as this many spins in
  // stalled(progress, spins): the clock is read at least every 8 such passes.
  // A busy pass can cost a system call (rxe's doorbell runs the requester in
  // it, milliseconds for a window of 64 KiB writes under emulation), where an
  // empty poll costs nanoseconds: after a stretch of empty polls had raised
  // the interval to kWatchEvery, 4096 busy passes went by unchecked, and a
  // bidirectional UC stream noticed its killed leader 4 s late (64 passes:
  // still 2 s once). On hardware a clock read per 8 passes that post is noise.
  static constexpr std::uint32_t kBusyPassSpins = kWatchEvery / 8;

  // True once no progress was seen for the stall duration, or the watched peer
  // is lost. `spins`: what this call counts for (kBusyPassSpins for a pass that
  // did work); the clock is read once the count reaches the adapted interval.
  [[nodiscard]] bool stalled(std::uint64_t progress, std::uint32_t spins = 1) noexcept {
    spins_ += spins;
    if (spins_ < every_) {
      due_ = false;
      return false;
    }
    return stalled_now(progress);
  }
  // Once per iteration of a loop that may never have to wait, and so never
  // call stalled(): its reply or completion already there at the first look
  // (a latency loop whose post, a system call on rxe, outlasts the round trip;
  // any loop under a slow tracer). Every kPassEvery passes it reads the coarse
  // clock (vDSO, no system call), and once kPassCheckNs went by without a
  // check it makes the check of stalled_now(): the pulse beats and the peer
  // is watched in such a loop too. True when the watched peer is lost.
  static constexpr std::uint32_t kPassEvery = 64;
  static constexpr std::uint64_t kPassCheckNs = 10'000'000;
  [[nodiscard, gnu::always_inline]] bool passed(std::uint64_t progress) noexcept {
    if (++passes_ % kPassEvery != 0) [[likely]]
      return false;
    return check_from_pass(progress);
  }

  // Reads the clock at once: for event mode, where each wakeup is already rare.
  [[nodiscard]] bool stalled_now(std::uint64_t progress) noexcept {
    const std::uint64_t t = now_ns();
    adapt(t);
    if (pulse_ != nullptr) pulse_->beat(t);
    const bool moved = progress != last_progress_;
    if (moved) {
      last_progress_ = progress;
      deadline_ = t + stall_ns_;
    }
    watch_peer(t, moved);
    if (peer_lost()) return true;
    return !moved && t > deadline_;
  }
  // Whether the last stalled() call read the clock (a cheap moment for rare work).
  [[nodiscard]] bool due() const noexcept { return due_; }
  // Calls of stalled() per clock read, as adapted so far.
  [[nodiscard]] std::uint32_t check_every() const noexcept { return every_; }
  [[nodiscard]] double stall_seconds() const noexcept { return static_cast<double>(stall_ns_) / 1e9; }
  [[nodiscard]] double silence_seconds() const noexcept { return static_cast<double>(silence_ns_) / 1e9; }
  [[nodiscard]] bool peer_gone() const noexcept { return gone_; }
  [[nodiscard]] bool peer_silent() const noexcept { return silent_; }
  [[nodiscard]] bool peer_lost() const noexcept { return gone_ || silent_; }
  [[nodiscard]] bool peer_done() const noexcept { return done_; }

 private:
  [[gnu::noinline]] bool check_from_pass(std::uint64_t progress) noexcept {
    return coarse_now_ns() > last_check_ + kPassCheckNs && stalled_now(progress);
  }
  // Scales `every` by how long the spins since the last check took (at most
  // doubling per check, never above kWatchEvery nor below 1).
  void adapt(std::uint64_t t) noexcept {
    spins_ = 0;
    due_ = true;
    const std::uint64_t dt = t > last_check_ ? t - last_check_ : 1;
    last_check_ = t;
    const std::uint64_t want = std::uint64_t{every_} * kCheckTargetNs / dt;
    every_ = static_cast<std::uint32_t>(
        std::clamp<std::uint64_t>(want, 1, std::min<std::uint64_t>(2ULL * every_, kWatchEvery)));
  }
  void watch_peer(std::uint64_t t, bool moved) noexcept {
    if (watched_ == nullptr || t < last_poll_ + (moved ? busy_poll_ns_ : kControlPollNs)) return;
    last_poll_ = t;
    switch (watched_->poll_incoming()) {
      case ctrl::Channel::Incoming::kClosed: gone_ = true; return;
      case ctrl::Channel::Incoming::kMessage:
        if (!done_) {
          // Its run is over: what has not arrived within a second will not.
          done_ = true;
          stall_ns_ = std::min<std::uint64_t>(stall_ns_, kAfterDoneNs);
          deadline_ = std::min(deadline_, t + stall_ns_);
        }
        return;
      case ctrl::Channel::Incoming::kNothing: break;
    }
    const std::uint64_t heard = watched_->last_heard_ns();
    silent_ = !done_ && t > heard + silence_ns_;
  }

  static constexpr std::uint64_t kAfterDoneNs = 1'000'000'000ULL;
  std::uint64_t stall_ns_;
  std::uint64_t silence_ns_;
  std::uint64_t deadline_;
  std::uint64_t last_progress_ = ~0ULL;
  std::uint64_t last_check_;
  std::uint32_t spins_ = 0;
  std::uint32_t every_ = 1;  // doubles per check up to kWatchEvery where spins are cheap
  std::uint32_t passes_ = 0;
  bool due_ = true;
  ctrl::Channel* watched_;
  std::uint64_t busy_poll_ns_;
  ctrl::Pulse* pulse_;
  std::uint64_t last_poll_ = 0;
  bool gone_ = false;
  bool silent_ = false;
  bool done_ = false;
};

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
