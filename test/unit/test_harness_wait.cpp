// harness::Watchdog, the one wait primitive: its verdicts for the idle side of a
// polling loop (progress/idle), the pair's limit, what a message on a watched
// channel means (stop, ignore, finish), and the yield policy.
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdint>

#include "fabench/ctrl/channel.hpp"
#include "fabench/harness/wait.hpp"

using namespace fabench;
using namespace std::chrono_literals;
using harness::Watch;
using harness::Watchdog;
using Clock = std::chrono::steady_clock;

namespace {

struct Link {
  ctrl::Channel ours;
  ctrl::Channel theirs;
};

Link link() {
  std::array<int, 2> fds{};
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds.data()) == 0);
  return {ctrl::Channel(fds[0]), ctrl::Channel(fds[1])};
}

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Idles until a verdict other than kGoOn or `limit` passes.
Watchdog::Verdict idle_until(Watchdog& w, std::chrono::milliseconds limit, double& seconds) {
  const auto t0 = Clock::now();
  auto v = Watchdog::Verdict::kGoOn;
  while (v == Watchdog::Verdict::kGoOn && Clock::now() - t0 < limit) v = w.idle();
  seconds = since(t0);
  return v;
}

}  // namespace

TEST_CASE("an idle wait without progress ends after the stall, and progress restarts it", "[harness][wait]") {
  Watch watch;
  watch.stall = 200ms;
  Watchdog w(watch);
  double s = 0;
  SECTION("no progress: kStall after the stall") {
    REQUIRE(idle_until(w, 3s, s) == Watchdog::Verdict::kStall);
    CHECK(s >= 0.15);
    CHECK(s < 1.5);
  }
  SECTION("progress keeps it going") {
    const auto t0 = Clock::now();
    while (since(t0) < 0.6) {
      w.progress();
      REQUIRE(w.idle() == Watchdog::Verdict::kGoOn);
    }
  }
}

TEST_CASE("a moving loop still ends at Watch::limit_ns", "[harness][wait]") {
  Watch watch;
  watch.stall = 30s;
  watch.limit_ns = harness::now_ns() + 200'000'000ULL;
  Watchdog w(watch);
  const auto t0 = Clock::now();
  std::uint64_t progress = 0;
  bool ended = false;
  while (!ended && since(t0) < 5) ended = w.stalled(++progress);
  REQUIRE(ended);
  CHECK(w.limit_reached());
  CHECK_FALSE(w.peer_lost());
  CHECK(since(t0) >= 0.15);
  CHECK(since(t0) < 2);
}

TEST_CASE("a message on a watched channel stops, is ignored or finishes, as Watch::on_message says",
          "[harness][wait]") {
  auto [ours, theirs] = link();
  auto [other, other_peer] = link();
  Watch watch;
  watch.stall = 30s;
  watch.channels = {&other, &ours};
  theirs.send(ctrl::Goodbye{});
  double s = 0;
  SECTION("kStop: kControl at once, naming the channel, neither closed nor silent") {
    Watchdog w(watch);
    REQUIRE(idle_until(w, 2s, s) == Watchdog::Verdict::kControl);
    CHECK(w.channel_index() == 1);
    CHECK_FALSE(w.channel_closed());
    CHECK_FALSE(w.channel_silent());
  }
  SECTION("kIgnore: the wait goes on") {
    watch.on_message = Watch::OnMessage::kIgnore;
    Watchdog w(watch);
    CHECK(idle_until(w, 300ms, s) == Watchdog::Verdict::kGoOn);
  }
  SECTION("kFinish (a pair engine's watched leader): done, then a second without progress is a stall") {
    Watchdog w(30'000ms, &ours);
    const auto t0 = Clock::now();
    bool ended = false;
    while (!ended && since(t0) < 5) ended = w.stalled(7);
    REQUIRE(ended);
    CHECK(w.peer_done());
    CHECK_FALSE(w.peer_lost());
    CHECK(since(t0) < 2.5);
  }
}

TEST_CASE("a closed watched channel ends the wait in both styles", "[harness][wait]") {
  std::array<int, 2> fds{};
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds.data()) == 0);
  ctrl::Channel ours(fds[0]);
  ::close(fds[1]);
  Watch watch;
  watch.stall = 30s;
  watch.channels = {&ours};
  double s = 0;
  Watchdog idle_style(watch);
  REQUIRE(idle_until(idle_style, 2s, s) == Watchdog::Verdict::kControl);
  CHECK(idle_style.channel_closed());
  Watchdog count_style(30'000ms, &ours);
  std::uint64_t progress = 0;
  const auto t0 = Clock::now();
  while (!count_style.stalled(++progress) && since(t0) < 5) {
  }
  CHECK(count_style.peer_gone());
}

TEST_CASE("the yield policy: spin first, then sleep or yield at every empty poll", "[harness][wait]") {
  Watch watch;
  watch.idle_sleep_us = 2000;
  SECTION("spin_before_yield large: no sleep") {
    watch.spin_before_yield = ~0U;
    Watchdog w(watch);
    const auto t0 = Clock::now();
    for (int i = 0; i < 1000; ++i) w.pause();
    CHECK(since(t0) < 0.5);
  }
  SECTION("spin_before_yield 0: a sleep per empty poll; busy() restarts the count") {
    watch.spin_before_yield = 0;
    Watchdog w(watch);
    const auto t0 = Clock::now();
    for (int i = 0; i < 20; ++i) w.pause();
    CHECK(since(t0) >= 0.035);
  }
  SECTION("spin_before_yield 1000: busy() restarts the count") {
    watch.spin_before_yield = 1000;
    Watchdog w(watch);
    const auto t0 = Clock::now();
    for (int i = 0; i < 5000; ++i) {
      if (i % 500 == 0) w.busy();
      w.pause();
    }
    CHECK(since(t0) < 0.5);
  }
}
