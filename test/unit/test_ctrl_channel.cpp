// Channel and Listener over loopback: messages, timeouts, closed peers and
// the one-line errors a user sees.
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <optional>
#include <string>
#include <thread>

#include "ctrl_support.hpp"
#include "fabench/ctrl/channel.hpp"

using namespace fabench::ctrl;
using fabench::test::catch_ctrl;
using fabench::test::connect_pair;
using fabench::test::seconds_since;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

// A port nobody listens on (bound, then released).
using fabench::test::unused_port;

}  // namespace

TEST_CASE("format_duration", "[ctrl][channel]") {
  CHECK(format_duration(30s) == "30 s");
  CHECK(format_duration(250ms) == "250 ms");
  CHECK(format_duration(1500ms) == "1.5 s");
}

TEST_CASE("messages cross a loopback channel intact, both ways", "[ctrl][channel]") {
  auto [client, server] = connect_pair();
  CHECK_THAT(server.peer_address(), Catch::StartsWith("127.0.0.1:"));
  const Command cmd{7, "write_lat", {{"msg_bytes", "4096"}}, 1000};
  client.send(cmd);
  CHECK(std::get<Command>(server.recv(2s)) == cmd);
  const Result res{7, ResultStatus::kOk, "", R"({"ok":true})", Record{}.set_f64("a", 1.0).set_f64("b", 2.0)};
  server.send(res);
  CHECK(std::get<Result>(client.recv(2s)) == res);
  // A large message (many endpoints) crosses in several socket writes.
  EndpointExchange big{1, std::vector<fabench::Endpoint>(100'000)};
  for (std::uint32_t i = 0; i < big.endpoints.size(); ++i) big.endpoints[i].qpn = i;
  std::jthread sender([&client = client, &big] { client.send(big, 10s); });
  const auto got = std::get<EndpointExchange>(server.recv(10s));
  sender.join();
  CHECK(got == big);
}

// Where the host has no IPv6 loopback this test prints a line starting
// "SKIPPED:", which ctest reports as a skipped test (SKIP_REGULAR_EXPRESSION
// in test/unit/CMakeLists.txt), not as a pass.
TEST_CASE("IPv6 loopback", "[ctrl][channel]") {
  std::optional<Listener> l;
  try {
    l.emplace(Listener::bind("::1", 0));
  } catch (const CtrlError& e) {
    std::cout << "SKIPPED: no IPv6 loopback on this host (" << e.what() << ")" << std::endl;
    return;
  }
  auto client = Channel::connect("::1", l->port(), 2s);
  auto server = l->accept(2s);
  REQUIRE(server);
  CHECK_THAT(server->peer_address(), Catch::StartsWith("[::1]:"));
  client.send(Barrier{9});
  CHECK(std::get<Barrier>(server->recv(2s)).epoch == 9);
}

TEST_CASE("the dual-stack wildcard listener accepts IPv4 clients, shown as IPv4", "[ctrl][channel]") {
  auto l = Listener::bind("", 0);
  auto client = Channel::connect("127.0.0.1", l.port(), 2s);
  auto server = l.accept(2s);
  REQUIRE(server);
  CHECK_THAT(server->peer_address(), Catch::StartsWith("127.0.0.1:"));
}

TEST_CASE("a silent peer times out, named, on time", "[ctrl][channel]") {
  auto [client, server] = connect_pair();
  client.send(Hello{kProtocolVersion, "0.1.0", "host-b", 3, 8});
  (void)server.exchange_hello(Hello{kProtocolVersion, "0.1.0", "host-a", 0, 8}, 2s);
  const auto t0 = Clock::now();
  const auto e = catch_ctrl([&server = server] { (void)server.recv(300ms); });
  const double elapsed = seconds_since(t0);
  CHECK(e.kind() == CtrlError::Kind::kTimeout);
  CHECK(std::string(e.what()) == "peer rank 3 (host-b " + server.peer_address() + ") silent for 300 ms");
  CHECK(elapsed >= 0.29);
  CHECK(elapsed < 2.0);
}

TEST_CASE("a peer that stops mid-message times out as such", "[ctrl][channel]") {
  auto [client, server] = connect_pair();
  const auto frame = encode(Error{"0123456789"});
  REQUIRE(::send(client.fd(), frame.data(), kHeaderBytes + 3, MSG_NOSIGNAL) == static_cast<ssize_t>(kHeaderBytes + 3));
  CHECK_THROWS_WITH(server.recv(200ms), Catch::EndsWith("silent for 200 ms in the middle of a message"));
}

TEST_CASE("a peer that closes is reported at once, not after the timeout", "[ctrl][channel]") {
  auto [client, server] = connect_pair();
  server.set_peer(5, "host-c");
  std::jthread closer([&client = client] {
    std::this_thread::sleep_for(100ms);
    client.close();
  });
  const auto t0 = Clock::now();
  const auto e = catch_ctrl([&server = server] { (void)server.recv(10s); });
  closer.join();
  CHECK(e.kind() == CtrlError::Kind::kClosed);
  CHECK(std::string(e.what()) == "peer rank 5 (host-c " + server.peer_address() + ") closed the connection");
  CHECK(seconds_since(t0) < 5.0);

  // Sending to it fails too (perhaps only once the kernel has seen the RST).
  std::optional<CtrlError> send_error;
  for (int i = 0; i < 50 && !send_error; ++i) {
    try {
      server.send(Barrier{1}, 1s);
      std::this_thread::sleep_for(10ms);
    } catch (const CtrlError& err) {
      send_error = err;
    }
  }
  REQUIRE(send_error);
  CHECK(send_error->kind() == CtrlError::Kind::kClosed);
  CHECK_THAT(send_error->what(), Catch::Contains("peer rank 5 (host-c") && Catch::Contains("closed the connection"));
}

TEST_CASE("a peer closing mid-message is reported as such", "[ctrl][channel]") {
  auto [client, server] = connect_pair();
  const auto frame = encode(Error{"0123456789"});
  REQUIRE(::send(client.fd(), frame.data(), kHeaderBytes + 2, MSG_NOSIGNAL) > 0);
  client.close();
  CHECK_THROWS_WITH(server.recv(2s), Catch::EndsWith("closed the connection in the middle of a message"));
}

TEST_CASE("garbage and oversized frames are refused, naming the peer", "[ctrl][channel]") {
  SECTION("garbage") {
    auto [client, server] = connect_pair();
    const std::string http = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    REQUIRE(::send(client.fd(), http.data(), http.size(), MSG_NOSIGNAL) > 0);
    const auto e = catch_ctrl([&server = server] { (void)server.recv(2s); });
    CHECK(e.kind() == CtrlError::Kind::kMalformed);
    CHECK_THAT(e.what(), Catch::Contains("bad magic") && Catch::Contains("(from peer 127.0.0.1:"));
  }
  SECTION("over the receiver's limit") {
    ChannelOptions small;
    small.max_payload_bytes = 1024;
    auto [client, server] = connect_pair("127.0.0.1", small);
    client.send(Gather{1, 0, std::vector<std::uint8_t>(2000)});
    CHECK_THROWS_WITH(server.recv(2s), Catch::Contains("exceeds the limit of 1024 bytes"));
  }
}

TEST_CASE("Hello exchange names the peer and refuses another protocol version", "[ctrl][channel]") {
  SECTION("same version") {
    auto [client, server] = connect_pair();
    server.send(Hello{kProtocolVersion, "0.1.0", "host-a", 0, 4});
    const Hello got = client.exchange_hello(Hello{kProtocolVersion, "0.1.0", "host-b", 2, 4}, 2s);
    CHECK(got.host_name == "host-a");
    CHECK(client.describe() == "peer rank 0 (host-a " + client.peer_address() + ")");
    CHECK(std::get<Hello>(server.recv(2s)).rank == 2);
  }
  SECTION("a pair peer (size 0) is named by host") {
    auto [client, server] = connect_pair();
    server.send(Hello{kProtocolVersion, "0.1.0", "server-host", 0, 0});
    (void)client.exchange_hello(Hello{kProtocolVersion, "0.1.0", "client-host", 0, 0}, 2s);
    CHECK(client.describe() == "peer server-host (" + client.peer_address() + ")");
  }
  SECTION("another version, as a newer peer would send it") {
    auto [client, server] = connect_pair();
    const std::uint16_t newer = kProtocolVersion + 1;
    const auto frame = encode(Hello{newer, "0.9.0", "host-new", 1, 2}, kMaxPayloadBytes, newer);
    REQUIRE(::send(server.fd(), frame.data(), frame.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(frame.size()));
    const auto e = catch_ctrl([&client = client] {
      (void)client.exchange_hello(Hello{kProtocolVersion, "x", "host-old", 0, 2}, 2s);
    });
    CHECK(e.kind() == CtrlError::Kind::kVersion);
    CHECK(std::string(e.what()) == "protocol version mismatch: peer rank 1 (host-new " + client.peer_address() +
                                       ") runs fabench 0.9.0 (control protocol v" + std::to_string(newer) +
                                       "), this process runs fabench " + std::string(build_version()) +
                                       " (control protocol v" + std::to_string(kProtocolVersion) +
                                       "); use the same fabench version on every host");
  }
  SECTION("something other than Hello first") {
    auto [client, server] = connect_pair();
    server.send(Barrier{1});
    CHECK_THROWS_WITH(client.exchange_hello(Hello{}, 2s),
                      Catch::StartsWith("expected Hello from peer 127.0.0.1:") && Catch::EndsWith("got Barrier"));
  }
}

TEST_CASE("a port in use is one clear line", "[ctrl][channel]") {
  auto first = Listener::bind("127.0.0.1", 0);
  const auto port = first.port();
  const auto e = catch_ctrl([&] { (void)Listener::bind("127.0.0.1", port); });
  CHECK(e.kind() == CtrlError::Kind::kNetwork);
  CHECK(std::string(e.what()) ==
        "port " + std::to_string(port) + " already in use (bind 127.0.0.1:" + std::to_string(port) + ")");

  auto wild = Listener::bind("", 0);
  const auto wport = wild.port();
  CHECK_THROWS_WITH(Listener::bind("", wport),
                    Catch::Matches("port " + std::to_string(wport) + R"( already in use \(bind (0\.0\.0\.0|\[::\]):)" +
                                   std::to_string(wport) + R"(\))"));
  CHECK_THAT(wild.address(), Catch::EndsWith(":" + std::to_string(wport)));
}

TEST_CASE("connecting: unresolvable host, refused, and a server that starts late", "[ctrl][channel]") {
  SECTION("unresolvable host") {
    const auto e = catch_ctrl([&] { (void)Channel::connect("no-such-host.invalid", 18515, 1s); });
    CHECK(e.kind() == CtrlError::Kind::kNetwork);
    CHECK_THAT(e.what(), Catch::Contains("cannot resolve host 'no-such-host.invalid'"));
  }
  SECTION("refused, retried until the deadline") {
    const auto port = unused_port();
    const auto t0 = Clock::now();
    const auto e = catch_ctrl([&] { (void)Channel::connect("127.0.0.1", port, 400ms); });
    const double elapsed = seconds_since(t0);
    CHECK(e.kind() == CtrlError::Kind::kNetwork);
    CHECK(std::string(e.what()) ==
          "cannot connect to 127.0.0.1:" + std::to_string(port) + ": Connection refused; retried for 400 ms");
    CHECK(elapsed >= 0.39);
    CHECK(elapsed < 3.0);
  }
  SECTION("a server that starts after its client") {
    const auto port = unused_port();
    std::optional<Listener> late;
    std::jthread starter([&] {
      std::this_thread::sleep_for(300ms);
      late.emplace(Listener::bind("127.0.0.1", port));
    });
    auto client = Channel::connect("127.0.0.1", port, 5s);
    starter.join();
    auto server = late->accept(2s);
    REQUIRE(server);
    client.send(Goodbye{});
    CHECK(std::holds_alternative<Goodbye>(server->recv(2s)));
  }
  SECTION("accept times out empty-handed") {
    auto l = Listener::bind("127.0.0.1", 0);
    const auto t0 = Clock::now();
    CHECK_FALSE(l.accept(200ms).has_value());
    CHECK(seconds_since(t0) >= 0.19);
  }
}

TEST_CASE("Keepalives restart a wait and are never returned", "[ctrl][channel]") {
  auto [client, server] = connect_pair();
  // Four keepalives 150 ms apart keep a 400 ms wait going for 600 ms; the
  // message that follows is the one recv() returns.
  std::jthread sender([&c = client] {
    for (int i = 0; i < 4; ++i) {
      std::this_thread::sleep_for(150ms);
      c.send(Keepalive{});
    }
    c.send(Barrier{7});
  });
  const auto t0 = Clock::now();
  const Message got = server.recv(400ms);
  sender.join();
  REQUIRE(std::holds_alternative<Barrier>(got));
  CHECK(std::get<Barrier>(got).epoch == 7);
  CHECK(seconds_since(t0) >= 0.55);
  // Without them, the same wait ends as "silent".
  const auto e = catch_ctrl([&s = server] { (void)s.recv(300ms); });
  CHECK(e.kind() == CtrlError::Kind::kTimeout);
  CHECK_THAT(e.what(), Catch::EndsWith("silent for 300 ms"));
}

TEST_CASE("poll_incoming tells nothing, a message and a closed peer apart without blocking", "[ctrl][channel]") {
  auto [client, server] = connect_pair();
  CHECK(server.poll_incoming() == Channel::Incoming::kNothing);
  const auto before = server.last_heard();
  client.send(Keepalive{});
  client.send(Keepalive{});
  std::this_thread::sleep_for(50ms);
  // Keepalives are taken (and count as heard); nothing else waits.
  CHECK(server.poll_incoming() == Channel::Incoming::kNothing);
  CHECK(server.last_heard() > before);
  client.send(Command{5, "finish", {}, 0});
  std::this_thread::sleep_for(50ms);
  CHECK(server.poll_incoming() == Channel::Incoming::kMessage);
  CHECK(server.poll_incoming() == Channel::Incoming::kMessage);  // not taken
  const Message got = server.recv(1s);
  REQUIRE(std::holds_alternative<Command>(got));
  CHECK(std::get<Command>(got).benchmark == "finish");
  CHECK(server.poll_incoming() == Channel::Incoming::kNothing);
  client.close();
  std::this_thread::sleep_for(50ms);
  CHECK(server.poll_incoming() == Channel::Incoming::kClosed);
}

TEST_CASE("connect from a chosen source address; an unusable one fails at once, named", "[ctrl][channel]") {
  auto l = Listener::bind("127.0.0.1", 0);
  ChannelOptions o;
  o.source_address = "127.0.0.2";  // every 127/8 address is this host's
  auto client = Channel::connect("127.0.0.1", l.port(), 2s, o);
  auto server = l.accept(2s);
  REQUIRE(server.has_value());
  CHECK(server->peer_address().rfind("127.0.0.2:", 0) == 0);

  o.source_address = "192.0.2.1";  // TEST-NET-1: not an address of this host
  const auto t0 = Clock::now();
  CHECK_THROWS_WITH(Channel::connect("127.0.0.1", l.port(), 5s, o),
                    Catch::Contains("cannot use source address 192.0.2.1") && Catch::Contains("of this host"));
  CHECK(seconds_since(t0) < 2.0);  // not retried for the 5 s
  o.source_address = "::1";
  CHECK_THROWS_WITH(Channel::connect("127.0.0.1", l.port(), 5s, o),
                    Catch::Contains("source address '::1' is not an IPv4 address"));
}
