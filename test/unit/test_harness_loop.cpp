// harness::Watchdog: how soon a loop notices that the rank driving it closed
// its control connection, whether the loop's spins are cheap or slow.
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <thread>

#include "fabench/ctrl/channel.hpp"
#include "fabench/harness/loop.hpp"

using fabench::ctrl::Channel;
using fabench::harness::now_ns;
using fabench::harness::Watchdog;

namespace {

struct Pair {
  Channel ours;
  int theirs;
};

Pair channel_and_fd() {
  std::array<int, 2> fds{};
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds.data()) == 0);
  return {Channel(fds[0]), fds[1]};
}

// Spins a loop that always makes progress (as a UC sender whose sends complete
// locally), each spin taking `spin`, until the Watchdog says stop or `limit`
// passes; returns the seconds from the peer's close to the stop.
double seconds_to_notice(std::chrono::microseconds spin, std::chrono::seconds limit) {
  auto [ch, peer] = channel_and_fd();
  Watchdog w(std::chrono::milliseconds(30'000), &ch);
  std::uint64_t progress = 0;
  // Run a while first, so the check interval has adapted to the spin cost.
  const std::uint64_t warm_until = now_ns() + 200'000'000ULL;
  while (now_ns() < warm_until) {
    if (w.stalled(++progress)) FAIL("the Watchdog stopped a loop whose peer is alive");
    if (spin.count() > 0) std::this_thread::sleep_for(spin);
  }
  ::close(peer);
  const std::uint64_t closed = now_ns();
  const std::uint64_t give_up = closed + static_cast<std::uint64_t>(limit.count()) * 1'000'000'000ULL;
  while (now_ns() < give_up) {
    if (w.stalled(++progress)) {
      CHECK(w.peer_gone());
      return static_cast<double>(now_ns() - closed) / 1e9;
    }
    if (spin.count() > 0) std::this_thread::sleep_for(spin);
  }
  return -1;
}

}  // namespace

TEST_CASE("a busy loop with slow spins notices a closed control channel within a fraction of a second",
          "[harness][loop]") {
  // 2 ms per spin: a fixed 4096 spins per check would take over 8 s.
  const double s = seconds_to_notice(std::chrono::microseconds(2000), std::chrono::seconds(10));
  INFO("noticed after " << s << " s");
  CHECK(s >= 0);
  CHECK(s < 0.5);
}

TEST_CASE("a busy loop with cheap spins notices a closed control channel at once, reading the clock rarely",
          "[harness][loop]") {
  const double s = seconds_to_notice(std::chrono::microseconds(0), std::chrono::seconds(10));
  INFO("noticed after " << s << " s");
  CHECK(s >= 0);
  CHECK(s < 0.5);
  // Cheap spins: the interval grew to its ceiling (a clock read per 4096 spins).
  auto [ch, peer] = channel_and_fd();
  Watchdog w(std::chrono::milliseconds(30'000), &ch);
  for (std::uint64_t i = 0; i < 1'000'000; ++i) (void)w.stalled(i);
  CHECK(w.check_every() == Watchdog::kWatchEvery);
  ::close(peer);
}

TEST_CASE("a loop whose cheap polls turn into slow busy passes notices a closed control channel within a fraction of a second",
          "[harness][loop]") {
  // Empty polls raise the interval to its ceiling; then every pass does work
  // and takes 1 ms (a doorbell that runs rxe's requester under emulation).
  // Counted as one spin each, 4096 of them (over 4 s) would pass unchecked.
  auto [ch, peer] = channel_and_fd();
  Watchdog w(std::chrono::milliseconds(30'000), &ch);
  std::uint64_t progress = 0;
  for (std::uint64_t i = 0; i < 1'000'000; ++i) (void)w.stalled(progress);
  REQUIRE(w.check_every() == Watchdog::kWatchEvery);
  ::close(peer);
  const std::uint64_t closed = now_ns();
  double s = -1;
  while (now_ns() < closed + 10'000'000'000ULL) {
    if (w.stalled(++progress, Watchdog::kBusyPassSpins)) {
      CHECK(w.peer_gone());
      s = static_cast<double>(now_ns() - closed) / 1e9;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  INFO("noticed after " << s << " s");
  CHECK(s >= 0);
  CHECK(s < 0.5);
}

TEST_CASE("a partial frame left by a peer that then closed reads as closed, not as more to come",
          "[harness][loop][ctrl]") {
  auto [ch, peer] = channel_and_fd();
  const std::array<std::uint8_t, 5> part{0x46, 0x42, 0x43, 0x50, 0x03};
  REQUIRE(::write(peer, part.data(), part.size()) == static_cast<ssize_t>(part.size()));
  CHECK(ch.poll_incoming() == Channel::Incoming::kNothing);
  ::close(peer);
  CHECK(ch.poll_incoming() == Channel::Incoming::kClosed);
}

TEST_CASE("a Watchdog with a long busy interval looks at the channel rarely while its loop moves, often once it waits",
          "[harness][loop]") {
  auto [ch, peer] = channel_and_fd();
  Watchdog w(std::chrono::milliseconds(30'000), &ch, Watchdog::kBusyPollLongNs);
  std::uint64_t progress = 0;
  REQUIRE_FALSE(w.stalled_now(++progress));  // its first look: the peer is there
  ::close(peer);
  // Progress at every check for 300 ms (< kBusyPollLongNs): the closed peer goes unnoticed.
  const std::uint64_t busy_until = now_ns() + 300'000'000ULL;
  while (now_ns() < busy_until) {
    REQUIRE_FALSE(w.stalled_now(++progress));
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  CHECK_FALSE(w.peer_gone());
  // No progress: it looks within kControlPollNs, and finds the peer gone.
  const std::uint64_t t0 = now_ns();
  while (!w.stalled_now(progress) && now_ns() - t0 < 5'000'000'000ULL) {
  }
  CHECK(w.peer_gone());
  const double s = static_cast<double>(now_ns() - t0) / 1e9;
  INFO("noticed after " << s << " s");
  CHECK(s < 0.05);
  // Moving again, it still looks every kBusyPollLongNs: a peer lost while the loop moves is found.
  auto [ch2, peer2] = channel_and_fd();
  Watchdog w2(std::chrono::milliseconds(30'000), &ch2, Watchdog::kBusyPollLongNs);
  REQUIRE_FALSE(w2.stalled_now(++progress));
  ::close(peer2);
  const std::uint64_t t1 = now_ns();
  while (!w2.stalled_now(++progress) && now_ns() - t1 < 5'000'000'000ULL) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  CHECK(w2.peer_gone());
  const double s2 = static_cast<double>(now_ns() - t1) / 1e9;
  INFO("noticed while moving after " << s2 << " s");
  CHECK(s2 >= 0.4);
  CHECK(s2 < 1.0);
}
