// The Watchdog's checks (wait.hpp): what runs at a clock read, off the loops' fast path.
#include "fabench/harness/wait.hpp"

#include <sched.h>
#include <time.h>

namespace fabench::harness {

namespace {

std::uint64_t ms_to_ns(std::chrono::milliseconds d) { return static_cast<std::uint64_t>(d.count()) * 1'000'000ULL; }

}  // namespace

Watchdog::Watchdog(const Watch& watch) noexcept
    : stall_(watch.stall),
      stall_ns_(ms_to_ns(watch.stall)),
      silence_ns_(ms_to_ns(watch.silence)),
      deadline_(now_ns() + stall_ns_),
      last_check_(deadline_ - stall_ns_),
      t_progress_(coarse_now_ns()),
      channels_(watch.channels),
      on_message_(watch.on_message),
      spin_before_yield_(watch.spin_before_yield),
      idle_sleep_us_(watch.idle_sleep_us),
      busy_poll_ns_(watch.busy_poll_ns),
      limit_ns_(watch.limit_ns),
      pulse_(watch.pulse) {}

Watchdog::Watchdog(std::chrono::milliseconds stall, ctrl::Channel* watched, std::uint64_t busy_poll_ns,
                   ctrl::Pulse* pulse) noexcept
    : stall_(stall),
      stall_ns_(ms_to_ns(stall)),
      silence_ns_(stall_ns_),
      deadline_(now_ns() + stall_ns_),
      last_check_(deadline_ - stall_ns_),
      t_progress_(coarse_now_ns()),
      one_{watched},
      channels_(one_, watched != nullptr ? 1 : 0),
      on_message_(Watch::OnMessage::kFinish),
      spin_before_yield_(~0U),
      idle_sleep_us_(0),
      busy_poll_ns_(busy_poll_ns),
      limit_ns_(0),
      pulse_(pulse) {}

bool Watchdog::stalled_now(std::uint64_t progress) noexcept {
  const std::uint64_t t = now_ns();
  adapt(t);
  if (pulse_ != nullptr) pulse_->beat(t);
  const bool moved = progress != last_progress_;
  if (moved) {
    last_progress_ = progress;
    deadline_ = t + stall_ns_;
  }
  if (watch_channels(t, moved) || peer_lost() || past_limit(t)) return true;
  return !moved && t > deadline_;
}

bool Watchdog::check_from_pass(std::uint64_t progress) noexcept {
  return coarse_now_ns() > last_check_ + kPassCheckNs && stalled_now(progress);
}

Watchdog::Verdict Watchdog::idle() noexcept {
  pause();
  if (idle_ % kClockEvery != 0 && spin_before_yield_ != 0) return Verdict::kGoOn;
  const std::uint64_t t = coarse_now_ns();
  if (t_progress_ == 0) t_progress_ = t;
  if (pulse_ != nullptr) pulse_->beat(t);
  if (watch_channels(t, false)) return Verdict::kControl;
  if (past_limit(t)) return Verdict::kLimit;
  return t - t_progress_ > stall_ns_ ? Verdict::kStall : Verdict::kGoOn;
}

void Watchdog::pause() noexcept {
  if (++idle_ < spin_before_yield_) return;
  if (idle_sleep_us_ > 0) {
    const timespec ts{0, static_cast<long>(idle_sleep_us_) * 1000L};
    nanosleep(&ts, nullptr);
  } else {
    sched_yield();
  }
}

// Scales `every` by how long the spins since the last check took (at most
// doubling per check, never above kWatchEvery nor below 1).
void Watchdog::adapt(std::uint64_t t) noexcept {
  spins_ = 0;
  due_ = true;
  const std::uint64_t dt = t > last_check_ ? t - last_check_ : 1;
  last_check_ = t;
  const std::uint64_t want = std::uint64_t{every_} * kCheckTargetNs / dt;
  every_ = static_cast<std::uint32_t>(
      std::clamp<std::uint64_t>(want, 1, std::min<std::uint64_t>(2ULL * every_, kWatchEvery)));
}

bool Watchdog::watch_channels(std::uint64_t t, bool moved) noexcept {
  if (channels_.empty() || t < last_poll_ + (moved ? busy_poll_ns_ : kControlPollNs)) return false;
  last_poll_ = t;
  for (std::size_t i = 0; i < channels_.size(); ++i) {
    switch (channels_[i]->poll_incoming()) {
      case ctrl::Channel::Incoming::kClosed:
        channel_ = i;
        closed_ = true;
        return true;
      case ctrl::Channel::Incoming::kMessage:
        if (on_message_ == Watch::OnMessage::kIgnore) continue;
        channel_ = i;
        if (on_message_ == Watch::OnMessage::kStop) return true;
        if (!done_) {
          // Its run is over: what has not arrived within a second will not.
          done_ = true;
          stall_ns_ = std::min<std::uint64_t>(stall_ns_, kAfterDoneNs);
          deadline_ = std::min(deadline_, t + stall_ns_);
        }
        continue;
      case ctrl::Channel::Incoming::kNothing: break;
    }
    silent_ = silence_ns_ > 0 && !done_ && t > channels_[i]->last_heard_ns() + silence_ns_;
    if (silent_) {
      channel_ = i;
      return true;
    }
  }
  return false;
}

bool Watchdog::past_limit(std::uint64_t t) noexcept {
  limited_ = limit_ns_ != 0 && t > limit_ns_;
  return limited_;
}

}  // namespace fabench::harness
