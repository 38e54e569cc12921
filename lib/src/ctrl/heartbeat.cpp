#include "fabench/ctrl/heartbeat.hpp"

#include <algorithm>
#include <ctime>

#include <spdlog/spdlog.h>

#include "fabench/ctrl/wire.hpp"

namespace fabench::ctrl {

Heartbeat::Heartbeat(std::vector<Channel*> channels, std::mutex& send_mutex, std::chrono::milliseconds interval)
    : channels_(std::move(channels)),
      send_mutex_(send_mutex),
      interval_(interval),
      thread_([this](const std::stop_token& stop) { beat(stop); }) {}

Heartbeat::~Heartbeat() {
  thread_.request_stop();
  if (thread_.joinable()) thread_.join();
}

void Heartbeat::beat(const std::stop_token& stop) {
  std::unique_lock lock(wait_mutex_);
  while (!channels_.empty() && !wake_.wait_for(lock, stop, interval_, [] { return false; })) {
    if (stop.stop_requested()) return;
    for (auto it = channels_.begin(); it != channels_.end();) {
      try {
        const std::lock_guard send_lock(send_mutex_);
        (*it)->send(Keepalive{}, std::chrono::milliseconds(1000));
        ++it;
      } catch (const std::exception& e) {
        spdlog::debug("keepalive to {}: {}", (*it)->describe(), e.what());
        it = channels_.erase(it);
      }
    }
  }
}

namespace {

std::uint64_t coarse_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ULL + static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace

std::chrono::milliseconds keepalive_interval(std::chrono::milliseconds timeout) noexcept {
  return std::clamp(timeout / 4, std::chrono::milliseconds{10}, Heartbeat::kInterval);
}

Pulse::Pulse(Channel& channel, std::chrono::milliseconds interval) noexcept
    : channel_(&channel),
      interval_ns_(static_cast<std::uint64_t>(std::chrono::nanoseconds(interval).count())),
      next_ns_(coarse_ns() + interval_ns_) {}

void Pulse::beat() noexcept { beat(coarse_ns()); }

void Pulse::send_now(std::uint64_t now_ns) noexcept {
  next_ns_ = now_ns + interval_ns_;
  if (failed_ || !channel_->is_open()) return;
  try {
    // A frame of a few bytes: the socket's buffer takes it at once unless
    // the peer has stopped reading for hours.
    channel_->send(Keepalive{}, std::chrono::milliseconds(1000));
    ++sent_;
  } catch (const std::exception& e) {
    spdlog::debug("keepalive to {}: {}", channel_->describe(), e.what());
    failed_ = true;
  }
}

}  // namespace fabench::ctrl
