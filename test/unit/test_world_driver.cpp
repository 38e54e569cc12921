// world::Waiter: what a rank's wait does about the channels it watches; the follower's wait
// between runs (world::follow against a Leader, over loopback).
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>

#include "ctrl_support.hpp"
#include "fabench/ctrl/bootstrap.hpp"
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

namespace {

class CountingJob final : public world::Job {
 public:
  void prepare(std::size_t /*bench*/, const world::Params& /*params*/) override {}
  [[nodiscard]] world::RankReport run(std::uint64_t iterations, const world::Watch& /*watch*/) override {
    runs_ += iterations;
    return {};
  }
  [[nodiscard]] std::string name(std::size_t /*bench*/) const override { return "count"; }
  std::uint64_t runs_ = 0;
};

}  // namespace

// Rank 0 spends time of its own between runs (Google Benchmark, a job's start): its Leader's
// Keepalives keep rank 1 waiting past --timeout; a rank 0 that falls silent (stopped) is named
// between runs within about --timeout, not after some multiple of it.
TEST_CASE("between runs rank 1 waits on a live rank 0 and names a silent one within --timeout", "[world][driver]") {
  const std::uint16_t port = test::unused_port();
  world::DriverOptions o;
  o.prog = "fake";
  o.timeout = 400ms;
  CountingJob job0;
  CountingJob job1;
  int follower_rc = -1;
  double follower_s = 0;
  std::string follower_err;
  std::thread rank1([&] {
    auto b = ctrl::Bootstrap::connect(test::loopback_config(1, 2, port));
    std::ostringstream err;
    auto* old = std::cerr.rdbuf(err.rdbuf());
    const auto t0 = Clock::now();
    follower_rc = world::follow(b, job1, o);
    follower_s = std::chrono::duration<double>(Clock::now() - t0).count();
    std::cerr.rdbuf(old);
    follower_err = err.str();
  });
  auto boot = ctrl::Bootstrap::connect(test::loopback_config(0, 2, port));
  SECTION("a live rank 0, busy for 3 x --timeout before each run") {
    {
      world::Leader leader(boot, job0, o);
      for (int i = 0; i < 2; ++i) {
        std::this_thread::sleep_for(3 * o.timeout);
        const auto out = leader.run(0, 3);
        CHECK(out.ok);
      }
      leader.finish();
    }
    rank1.join();
    INFO(follower_err);
    CHECK(follower_rc == 0);
    CHECK(job1.runs_ == 6);
  }
  SECTION("a silent rank 0: no Leader, no Keepalive") {
    rank1.join();
    INFO(follower_err);
    CHECK(follower_rc == 1);
    CHECK(follower_err.find("rank 0 (host-0) sent nothing for 400 ms (stopped or unreachable) between runs") !=
          std::string::npos);
    CHECK(follower_s >= 0.35);
    CHECK(follower_s < 2.0);
  }
}
