// world::Waiter: what a rank's wait does about the channels it watches.
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <mutex>

#include "fabench/ctrl/channel.hpp"
#include "fabench/ctrl/heartbeat.hpp"
#include "fabench/world/driver.hpp"

using namespace fabench;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

// Idles a Waiter until it gives a verdict other than kGoOn or `limit` passes.
world::Waiter::Verdict idle_until_verdict(world::Waiter& w, std::chrono::milliseconds limit, double& seconds) {
  const auto t0 = Clock::now();
  auto v = world::Waiter::Verdict::kGoOn;
  while (v == world::Waiter::Verdict::kGoOn && Clock::now() - t0 < limit) v = w.idle();
  seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return v;
}

}  // namespace

TEST_CASE("a watched channel silent for Watch::silence ends the wait, named as silent", "[world][driver]") {
  std::array<int, 2> fds{};
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds.data()) == 0);
  ctrl::Channel ours(fds[0]);
  ctrl::Channel theirs(fds[1]);
  world::Watch watch;
  watch.stall = 30s;
  watch.channels = {&ours};
  watch.silence = 300ms;

  SECTION("a peer that beats keeps it going") {
    std::mutex send_mutex;
    const ctrl::Heartbeat beat({&theirs}, send_mutex, 50ms);
    world::Waiter w(watch);
    double s = 0;
    CHECK(idle_until_verdict(w, 900ms, s) == world::Waiter::Verdict::kGoOn);
  }
  SECTION("a silent one ends it after the silence, well before the stall") {
    world::Waiter w(watch);
    double s = 0;
    REQUIRE(idle_until_verdict(w, 5s, s) == world::Waiter::Verdict::kControl);
    CHECK(w.channel_silent());
    CHECK_FALSE(w.channel_closed());
    CHECK(w.channel_index() == 0);
    INFO("after " << s << " s");
    CHECK(s >= 0.25);
    CHECK(s < 1.0);
  }
  SECTION("without Watch::silence, silence is no verdict") {
    watch.silence = 0ms;
    world::Waiter w(watch);
    double s = 0;
    CHECK(idle_until_verdict(w, 700ms, s) == world::Waiter::Verdict::kGoOn);
  }
}
