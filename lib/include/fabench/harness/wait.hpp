// The one wait primitive of every loop that waits for the fabric: poll, notice
// the control channels, yield or spin, give up after the stall. It lives in
// harness, the lowest layer that sees both the control channels (ctrl) and the
// loops' callers (pair, world and every N-rank job above it).
//
// A loop tells the Watchdog what it did in one of two ways:
//  - stalled(progress, spins): a count that moves when work moves; the clock is
//    read once per `every` calls, an interval that adapts so that a check
//    falls about every kCheckTargetNs of loop time (the pair engines' timed
//    loops: one compare per pass on the fast path);
//  - progress() after a poll that found work, idle() after one that did not
//    (the N-rank executors): idle() yields or sleeps as Watch says and reads
//    the coarse clock (harness::coarse_now_ns(): a precise read is a system
//    call in some guests) every kClockEvery calls, or at every call when it
//    yields.
// pause() and busy() are the yield policy alone, for a loop that counts its
// progress with stalled() (fabench-accept's pair).
//
// At each check it looks at the watched channels (at most every
// kControlPollNs while the loop waits, every Watch::busy_poll_ns while it
// moves):
//  - closed connection: the peer is gone (peer_gone, Verdict::kControl);
//  - no frame (its Keepalives included) for Watch::silence: it is stopped or
//    unreachable (peer_silent, kControl);
//  - a message waiting: per Watch::on_message, stop now (kStop: a follower,
//    whose driver speaks mid-run only to abort), ignore it (kIgnore: rank 0
//    lets early results wait) or finish (kFinish: the pair leader's
//    "finish"; from then on a second without progress counts as a stall:
//    peer_done).
// The loop gives up after Watch::stall without progress (kStall), or once
// Watch::limit_ns (CLOCK_MONOTONIC) is past (kLimit: a slow but moving peer
// cannot hold it longer).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <span>
#include <vector>

#include "fabench/ctrl/channel.hpp"
#include "fabench/ctrl/heartbeat.hpp"

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

// The watched control channels are looked at no more often than this.
inline constexpr std::uint64_t kControlPollNs = 10'000'000;

// What a wait watches besides its own progress (see Watchdog).
struct Watch {
  enum class OnMessage : std::uint8_t { kStop, kIgnore, kFinish };

  std::chrono::milliseconds stall{30'000};  // no progress for this long fails the wait
  std::vector<ctrl::Channel*> channels;     // whose peers may end it
  OnMessage on_message = OnMessage::kStop;
  // When > 0: a channel that brought no frame (Keepalives included) for this long ends it too.
  std::chrono::milliseconds silence{0};
  // Empty polls before sched_yield(): 0 = yield at every empty poll (ranks
  // outnumber cores), large = spin.
  std::uint32_t spin_before_yield = 0;
  // After spin_before_yield empty polls, sleep this long instead of yielding
  // (0: yield). For a rank that only waits for a notification: its spinning
  // would take a core from the one that posts (and from rxe's kernel threads).
  std::uint32_t idle_sleep_us = 0;
  // How often the channels are looked at while the loop moves (kControlPollNs;
  // a timed latency loop passes more, so that a system call lands in a sample rarely).
  std::uint64_t busy_poll_ns = kControlPollNs;
  std::uint64_t limit_ns = 0;    // CLOCK_MONOTONIC time past which the wait ends (0: none)
  ctrl::Pulse* pulse = nullptr;  // beaten at each check (a process without a heartbeat thread)
};

class Watchdog {
 public:
  enum class Verdict { kGoOn, kControl, kStall, kLimit };

  static constexpr std::uint32_t kWatchEvery = 1U << 12;
  static constexpr std::uint64_t kCheckTargetNs = 1'000'000;
  static constexpr std::uint64_t kBusyPollLongNs = 500'000'000;
  // A pass of a loop that posted or reaped work counts as this many spins in
  // stalled(progress, spins): the clock is read at least every 8 such passes
  // (a busy pass can cost a system call on a software device; after a stretch
  // of empty polls had raised the interval to kWatchEvery, 4096 busy passes
  // went by unchecked). On hardware a clock read per 8 passes that post is noise.
  static constexpr std::uint32_t kBusyPassSpins = kWatchEvery / 8;
  // passed(): the coarse clock every kPassEvery passes, a check once kPassCheckNs went by without one.
  static constexpr std::uint32_t kPassEvery = 64;
  static constexpr std::uint64_t kPassCheckNs = 10'000'000;
  // idle(): the clock every kClockEvery calls (at every call when it yields).
  static constexpr std::uint32_t kClockEvery = 1024;

  explicit Watchdog(const Watch& watch) noexcept;
  // A pair engine's: `watched` (the rank driving the run, or none) finishes the
  // run with a message and is silent after `stall`.
  explicit Watchdog(std::chrono::milliseconds stall, ctrl::Channel* watched = nullptr,
                    std::uint64_t busy_poll_ns = kControlPollNs, ctrl::Pulse* pulse = nullptr) noexcept;
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // True once no progress was seen for the stall, the limit passed, or a
  // watched peer is lost. `spins`: what this call counts for (kBusyPassSpins
  // for a pass that did work).
  [[nodiscard]] bool stalled(std::uint64_t progress, std::uint32_t spins = 1) noexcept {
    spins_ += spins;
    if (spins_ < every_) {
      due_ = false;
      return false;
    }
    return stalled_now(progress);
  }
  // Once per iteration of a loop that may never have to wait (its reply
  // already there at the first look): every kPassEvery passes it reads the
  // coarse clock, and makes the check of stalled_now() once kPassCheckNs
  // went by without one. True when the watched peer is lost.
  [[nodiscard, gnu::always_inline]] bool passed(std::uint64_t progress) noexcept {
    if (++passes_ % kPassEvery != 0) [[likely]]
      return false;
    return check_from_pass(progress);
  }
  // Reads the clock at once: for event mode, where each wakeup is already rare.
  [[nodiscard]] bool stalled_now(std::uint64_t progress) noexcept;

  // The idle side of a polling loop: progress() after a poll that found
  // something, idle() after one that did not.
  void progress() noexcept {
    busy();
    t_progress_ = 0;  // read the clock again at the next idle check
  }
  [[nodiscard]] Verdict idle() noexcept;
  // The yield policy alone: busy() after a pass that did work, pause() after
  // an empty one (yields or sleeps after Watch::spin_before_yield in a row).
  void busy() noexcept { idle_ = 0; }
  void pause() noexcept;

  // Whether the last stalled() call read the clock (a cheap moment for rare work).
  [[nodiscard]] bool due() const noexcept { return due_; }
  // Calls of stalled() per clock read, as adapted so far.
  [[nodiscard]] std::uint32_t check_every() const noexcept { return every_; }
  [[nodiscard]] double stall_seconds() const noexcept { return static_cast<double>(stall_ns_) / 1e9; }
  [[nodiscard]] double silence_seconds() const noexcept { return static_cast<double>(silence_ns_) / 1e9; }
  [[nodiscard]] std::chrono::milliseconds stall() const noexcept { return stall_; }
  [[nodiscard]] bool peer_gone() const noexcept { return closed_; }
  [[nodiscard]] bool peer_silent() const noexcept { return silent_; }
  [[nodiscard]] bool peer_lost() const noexcept { return closed_ || silent_; }
  [[nodiscard]] bool peer_done() const noexcept { return done_; }
  [[nodiscard]] bool limit_reached() const noexcept { return limited_; }
  // After kControl: which channel, and whether it closed or fell silent (else it spoke).
  [[nodiscard]] std::size_t channel_index() const noexcept { return channel_; }
  [[nodiscard]] bool channel_closed() const noexcept { return closed_; }
  [[nodiscard]] bool channel_silent() const noexcept { return silent_; }

 private:
  [[gnu::noinline]] bool check_from_pass(std::uint64_t progress) noexcept;
  void adapt(std::uint64_t t) noexcept;
  // Looks at the channels at `t`; true when one ends the wait.
  bool watch_channels(std::uint64_t t, bool moved) noexcept;
  bool past_limit(std::uint64_t t) noexcept;

  static constexpr std::uint64_t kAfterDoneNs = 1'000'000'000ULL;
  std::chrono::milliseconds stall_;
  std::uint64_t stall_ns_;
  std::uint64_t silence_ns_;
  std::uint64_t deadline_;
  std::uint64_t last_progress_ = ~0ULL;
  std::uint64_t last_check_;
  std::uint64_t t_progress_;  // idle(): the last progress seen at a clock read (0: read it again)
  std::uint32_t spins_ = 0;
  std::uint32_t every_ = 1;  // doubles per check up to kWatchEvery where spins are cheap
  std::uint32_t passes_ = 0;
  std::uint32_t idle_ = 0;  // empty polls in a row
  bool due_ = true;
  ctrl::Channel* one_[1] = {nullptr};  // the pair engine's single watched channel
  std::span<ctrl::Channel* const> channels_;
  Watch::OnMessage on_message_;
  std::uint32_t spin_before_yield_;
  std::uint32_t idle_sleep_us_;
  std::uint64_t busy_poll_ns_;
  std::uint64_t limit_ns_;
  ctrl::Pulse* pulse_;
  std::uint64_t last_poll_ = 0;
  std::size_t channel_ = 0;
  bool closed_ = false;
  bool silent_ = false;
  bool done_ = false;
  bool limited_ = false;
};

}  // namespace fabench::harness
