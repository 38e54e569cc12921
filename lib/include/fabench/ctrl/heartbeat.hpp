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
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "fabench/ctrl/channel.hpp"

namespace fabench::ctrl {

// The Keepalive interval of an end whose peer gives up after `timeout` of
// silence (the peers of a pair run with the same --timeout as a rule): a
// quarter of it, at most Heartbeat::kInterval (1 s) and at least 10 ms. With
// --timeout 2 a Keepalive goes every 0.5 s, so one that is late by a loop's
// longest pass (a window of 64 KiB writes under emulation: a few hundred ms)
// still arrives in time; from --timeout 4 up it is one a second.
[[nodiscard]] std::chrono::milliseconds keepalive_interval(std::chrono::milliseconds timeout) noexcept;

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

// The Heartbeat without a thread: its owner calls beat() from wherever it
// spends time (a timed loop's harness::Watchdog, between the steps of a long
// set-up or check), and a Keepalive goes out on the channel when the last
// one is `interval` old. For a process that must stay single-threaded while
// it measures: once a process has a second thread, glibc takes its
// cancellable path for every system call (a software RDMA provider's
// doorbell is one per post) and the kernel looks up files with a reference
// count (docs/design/perftest-parity.md, "Single-threaded ends"). A failed
// send stops the beats quietly (the owner meets the failure at its next
// exchange). Not thread-safe: the owner's thread alone sends on the channel.
class Pulse {
 public:
  explicit Pulse(Channel& channel, std::chrono::milliseconds interval = Heartbeat::kInterval) noexcept;

  // A Keepalive when one is due; otherwise a read of CLOCK_MONOTONIC_COARSE (vDSO).
  void beat() noexcept;
  // The same at `now_ns` (CLOCK_MONOTONIC nanoseconds, as harness::now_ns()):
  // a comparison unless one is due.
  void beat(std::uint64_t now_ns) noexcept {
    if (now_ns >= next_ns_) [[unlikely]]
      send_now(now_ns);
  }
  // Keepalives sent so far.
  [[nodiscard]] std::uint64_t sent() const noexcept { return sent_; }

 private:
  [[gnu::cold, gnu::noinline]] void send_now(std::uint64_t now_ns) noexcept;

  Channel* channel_;
  std::uint64_t interval_ns_;
  std::uint64_t next_ns_;
  std::uint64_t sent_ = 0;
  bool failed_ = false;
};

}  // namespace fabench::ctrl
