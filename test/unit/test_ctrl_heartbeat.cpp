// ctrl::Heartbeat and Channel::recv_live: how a live but busy peer is told
// from a stopped one (silence, counted from the last frame heard).
#include <catch2/catch.hpp>

#include <chrono>
#include <mutex>
#include <thread>

#include "ctrl_support.hpp"
#include "fabench/ctrl/channel.hpp"
#include "fabench/ctrl/heartbeat.hpp"

using namespace fabench::ctrl;
using fabench::test::catch_ctrl;
using fabench::test::connect_pair;
using fabench::test::seconds_since;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

TEST_CASE("recv_live counts silence from the last frame heard, not from the call", "[ctrl][heartbeat]") {
  auto [client, server] = connect_pair();
  client.send(Keepalive{});
  std::this_thread::sleep_for(50ms);
  REQUIRE(server.poll_incoming() == Channel::Incoming::kNothing);  // takes it: heard now
  std::this_thread::sleep_for(250ms);
  // 250 of the 400 ms already passed while this side was busy elsewhere.
  const auto t0 = Clock::now();
  const auto e = catch_ctrl([&s = server] { (void)s.recv_live(400ms); });
  const double waited = seconds_since(t0);
  CHECK(e.kind() == CtrlError::Kind::kTimeout);
  CHECK_THAT(e.what(), Catch::EndsWith("silent for 400 ms"));
  INFO("waited " << waited << " s");
  CHECK(waited >= 0.1);
  CHECK(waited < 0.3);
  // recv() would have waited the whole 400 ms from its call.
  const auto t1 = Clock::now();
  (void)catch_ctrl([&s = server] { (void)s.recv(400ms); });
  CHECK(seconds_since(t1) >= 0.39);
}

TEST_CASE("a Heartbeat keeps a peer's recv_live waiting for as long as it beats", "[ctrl][heartbeat]") {
  auto [client, server] = connect_pair();
  std::mutex send_mutex;
  Clock::time_point t0;
  // Joined on every way out: a failed REQUIRE below throws, and a joinable
  // std::thread's destructor would abort the whole test run.
  std::jthread worker;
  {
    const Heartbeat beat({&client}, send_mutex, 100ms);
    t0 = Clock::now();
    // The owner's own message comes after 1 s, five times the 200 ms of
    // silence the reader allows, sent under the same mutex as the beats.
    worker = std::jthread([&c = client, &send_mutex] {
      std::this_thread::sleep_for(1s);
      const std::lock_guard lock(send_mutex);
      c.send(Barrier{42});
    });
    const Message got = server.recv_live(200ms);
    REQUIRE(std::holds_alternative<Barrier>(got));
    CHECK(std::get<Barrier>(got).epoch == 42);
    CHECK(seconds_since(t0) >= 0.95);
    worker.join();
  }
  // Stopped: the reader sees silence within its 200 ms of the last beat.
  const auto t1 = Clock::now();
  const auto e = catch_ctrl([&s = server] { (void)s.recv_live(200ms); });
  CHECK(e.kind() == CtrlError::Kind::kTimeout);
  CHECK(seconds_since(t1) < 0.25);
}

TEST_CASE("a Heartbeat drops a channel whose peer is gone and beats on the others; it stops at once",
          "[ctrl][heartbeat]") {
  auto a = connect_pair();
  auto b = connect_pair();
  a.server.close();  // a's peer is gone: sends to it fail (reset) after the first
  std::mutex send_mutex;
  {
    const Heartbeat beat({&a.client, &b.client}, send_mutex, 50ms);
    std::this_thread::sleep_for(200ms);
    const auto before = b.server.last_heard();
    std::this_thread::sleep_for(300ms);
    CHECK(b.server.poll_incoming() == Channel::Incoming::kNothing);
    CHECK(b.server.last_heard() > before);  // b still hears it
  }
  // A long interval does not delay the end: the thread wakes when told to stop.
  const auto t0 = Clock::now();
  { const Heartbeat slow({&b.client}, send_mutex, 10s); }
  CHECK(seconds_since(t0) < 0.5);
}

TEST_CASE("a Pulse sends a Keepalive when one is due and keeps its peer hearing it", "[ctrl][heartbeat][pulse]") {
  auto [client, server] = connect_pair();
  Pulse pulse(client, 100ms);
  // Not due yet: the first beat comes one interval after the Pulse was made.
  pulse.beat();
  CHECK(pulse.sent() == 0);
  // A loop that beats every 10 ms for 1 s: about one Keepalive per 100 ms.
  const auto t0 = Clock::now();
  while (seconds_since(t0) < 1.0) {
    pulse.beat();
    std::this_thread::sleep_for(10ms);
  }
  INFO("sent " << pulse.sent());
  CHECK(pulse.sent() >= 8);
  CHECK(pulse.sent() <= 11);
  // The peer heard the last of them less than an interval (plus a tick) ago.
  CHECK(server.poll_incoming() == Channel::Incoming::kNothing);
  CHECK(server.silent_for(100ms) == false);
  // Without beats it falls silent.
  std::this_thread::sleep_for(300ms);
  CHECK(server.poll_incoming() == Channel::Incoming::kNothing);
  CHECK(server.silent_for(250ms));
}

TEST_CASE("a Pulse beaten with the caller's clock sends only at the due time", "[ctrl][heartbeat][pulse]") {
  auto [client, server] = connect_pair();
  Pulse pulse(client, 1s);
  const auto now = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count());
  pulse.beat(now);  // due one second from its creation
  CHECK(pulse.sent() == 0);
  pulse.beat(now + 2'000'000'000ULL);
  CHECK(pulse.sent() == 1);
  pulse.beat(now + 2'500'000'000ULL);  // the next is due a second after that one
  CHECK(pulse.sent() == 1);
  pulse.beat(now + 3'000'000'000ULL);
  CHECK(pulse.sent() == 2);
  std::this_thread::sleep_for(50ms);
  CHECK(server.poll_incoming() == Channel::Incoming::kNothing);  // Keepalives are taken, never returned
}

TEST_CASE("a Pulse whose peer is gone stops quietly", "[ctrl][heartbeat][pulse]") {
  auto [client, server] = connect_pair();
  Pulse pulse(client, 1s);
  server.close();
  std::uint64_t t = 2'000'000'000'000ULL;  // far past the first due time
  // The first sends may still be taken by the kernel; a reset peer fails one
  // within a few, after which no more are tried.
  for (int k = 0; k < 20; ++k, t += 2'000'000'000ULL) {
    REQUIRE_NOTHROW(pulse.beat(t));
    std::this_thread::sleep_for(10ms);
  }
  const std::uint64_t sent = pulse.sent();
  CHECK(sent < 5);
  for (int k = 0; k < 5; ++k, t += 2'000'000'000ULL) pulse.beat(t);
  CHECK(pulse.sent() == sent);
  REQUIRE(client.is_open());
}

TEST_CASE("the Keepalive interval is a quarter of the timeout, between 10 ms and a second", "[ctrl][heartbeat][pulse]") {
  using std::chrono::milliseconds;
  CHECK(keepalive_interval(milliseconds{30'000}) == milliseconds{1000});  // the default --timeout
  CHECK(keepalive_interval(milliseconds{4000}) == milliseconds{1000});
  CHECK(keepalive_interval(milliseconds{2000}) == milliseconds{500});  // bench_keepalive's --timeout 2
  CHECK(keepalive_interval(milliseconds{500}) == milliseconds{125});
  CHECK(keepalive_interval(milliseconds{20}) == milliseconds{10});
  CHECK(keepalive_interval(milliseconds{0}) == milliseconds{10});
}
