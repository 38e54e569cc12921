// What the control-plane unit tests share.
#pragma once

#include <catch2/catch.hpp>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "fabench/ctrl/bootstrap.hpp"
#include "fabench/ctrl/channel.hpp"
#include "fabench/ctrl/error.hpp"

namespace fabench::test {

// Both ends of one loopback connection.
struct ChannelPair {
  ctrl::Channel client;
  ctrl::Channel server;
};

inline ChannelPair connect_pair(const std::string& host = "127.0.0.1", ctrl::ChannelOptions server_opts = {}) {
  using namespace std::chrono_literals;
  auto listener = ctrl::Listener::bind(host, 0);
  auto client = ctrl::Channel::connect(host, listener.port(), 2s);
  auto server = listener.accept(2s, server_opts);
  REQUIRE(server.has_value());
  return ChannelPair{std::move(client), std::move(*server)};
}

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The CtrlError `f` throws; fails the test when it throws none.
template <typename F>
ctrl::CtrlError catch_ctrl(F&& f) {
  try {
    f();
  } catch (const ctrl::CtrlError& e) {
    return e;
  }
  FAIL("no CtrlError thrown");
  return ctrl::CtrlError(ctrl::CtrlError::Kind::kProtocol, "unreachable");
}

// A loopback TCP port that was free a moment ago.
inline std::uint16_t unused_port() { return ctrl::Listener::bind("127.0.0.1", 0).port(); }

// Rank `rank` of `size` meeting at 127.0.0.1:`port`, named host-<rank>.
inline ctrl::BootstrapConfig loopback_config(std::uint32_t rank, std::uint32_t size, std::uint16_t port,
                                             std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
  ctrl::BootstrapConfig c;
  c.rank = rank;
  c.size = size;
  c.master_addr = "127.0.0.1";
  c.master_port = port;
  c.timeout = timeout;
  c.host_name = "host-" + std::to_string(rank);
  return c;
}

// An environment holding exactly `vars`.
inline ctrl::EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

}  // namespace fabench::test
