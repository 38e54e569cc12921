#include "fabench/ctrl/heartbeat.hpp"

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

}  // namespace fabench::ctrl
