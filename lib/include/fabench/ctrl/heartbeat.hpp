// A thread that proves this process is alive to the peers of some channels:
// a Keepalive on each about every `interval`, until the Heartbeat is
// destroyed. A peer waiting on one of these channels (Channel::recv,
// Channel::poll_incoming and last_heard()) then tells a live process that is
// busy from one that is stopped (SIGSTOP) or cut off: silence for its timeout.
//
// Every send holds `send_mutex`; whoever else sends on these channels while
// the Heartbeat lives must hold it too, so that frames never interleave. A
// channel whose send fails is dropped quietly (its owner meets the failure at
// its next exchange); the others go on.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "fabench/ctrl/channel.hpp"

namespace fabench::ctrl {

class Heartbeat {
 public:
  static constexpr std::chrono::milliseconds kInterval{1000};  // well inside any timeout worth having (>= 2 s)

  Heartbeat(std::vector<Channel*> channels, std::mutex& send_mutex, std::chrono::milliseconds interval = kInterval);
  ~Heartbeat();
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

 private:
  void beat(const std::stop_token& stop);

  std::vector<Channel*> channels_;
  std::mutex& send_mutex_;
  std::chrono::milliseconds interval_;
  std::mutex wait_mutex_;
  std::condition_variable_any wake_;
  std::jthread thread_;  // last: stops (destructor order) before what it uses goes
};

}  // namespace fabench::ctrl
