// Channel: one connected TCP socket carrying control messages (wire.hpp), and
// Listener: the socket that accepts them. IPv4 and IPv6 (getaddrinfo).
//
// Every blocking wait has a timeout, implemented with poll(2) on a
// non-blocking socket (EINTR restarts the wait with the time left). Failures
// are one line naming the peer by rank, host and address, for example
//   "peer rank 3 (host-b 10.0.0.2:41234) closed the connection"
//   "peer rank 3 (host-b 10.0.0.2:41234) silent for 30 s"
// Sockets use TCP_NODELAY (small request/response messages) and
// MSG_NOSIGNAL (a closed peer is an error to report, not a SIGPIPE).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "fabench/ctrl/error.hpp"
#include "fabench/ctrl/wire.hpp"

namespace fabench::ctrl {

inline constexpr std::chrono::milliseconds kDefaultTimeout{30'000};

struct ChannelOptions {
  std::chrono::milliseconds timeout = kDefaultTimeout;  // default for send() and recv()
  std::uint32_t max_payload_bytes = kMaxPayloadBytes;   // larger incoming frames are rejected
  std::string source_address;  // connect(): bind to this local IP first ("": the routing table's choice)
};

// What one end brings to the shared-token check of exchange_hello (token.hpp).
struct Credentials {
  std::string token;       // the shared secret; empty: this end holds none
  bool accepting = false;  // this end accepted the connection (a pair server, rank 0)
};

// "30 s", "250 ms", "1.5 s": how durations appear in messages.
[[nodiscard]] std::string format_duration(std::chrono::milliseconds d);
// gethostname(), or "unknown-host" (lib/base).
using fabench::local_host_name;

class Channel {
 public:
  // Connects to host:port, trying every address getaddrinfo returns. A refused,
  // unreachable or timed-out attempt is retried until `retry_for` has passed,
  // because a server may start after its clients. An unresolvable host fails at
  // once.
  [[nodiscard]] static Channel connect(const std::string& host, std::uint16_t port,
                                       std::chrono::milliseconds retry_for = kDefaultTimeout,
                                       ChannelOptions options = {});

  // Adopts a connected socket (made non-blocking here).
  explicit Channel(int fd, ChannelOptions options = {});
  Channel(Channel&& other) noexcept;
  Channel& operator=(Channel&& other) noexcept;
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;
  ~Channel();

  void send(const Message& msg) { send(msg, options_.timeout); }
  void send(const Message& msg, std::chrono::milliseconds timeout);
  // Waits at most `timeout` for one whole message. An Error message is
  // returned like any other (the caller decides what it means). Keepalive
  // frames are taken here and never returned: each restarts the wait, so
  // "silent for T" means no frame at all for T.
  [[nodiscard]] Message recv() { return recv(options_.timeout); }
  [[nodiscard]] Message recv(std::chrono::milliseconds timeout);
  // As recv(), but `silence` counts from the last frame heard (last_heard()),
  // not from this call: for a peer that sends Keepalives while it works, so
  // that one which stopped is noticed `silence` after its last frame, however
  // long the caller was busy elsewhere before it asked.
  [[nodiscard]] Message recv_live(std::chrono::milliseconds silence);

  // What waits on the socket, without blocking and without taking a message
  // (Keepalive frames are taken, as recv() would). For a loop that must notice
  // its peer while doing other work: kClosed when the peer closed or reset
  // the connection, kMessage when a frame (or garbage: recv() will say) waits.
  enum class Incoming : std::uint8_t { kNothing, kMessage, kClosed };
  [[nodiscard]] Incoming poll_incoming() noexcept;
  // When the last frame (of any type, Keepalive included) arrived; the
  // channel's creation before the first.
  [[nodiscard]] std::chrono::steady_clock::time_point last_heard() const noexcept { return last_heard_; }
  // The same in nanoseconds of CLOCK_MONOTONIC (steady_clock's), for loops on harness::now_ns().
  [[nodiscard]] std::uint64_t last_heard_ns() const noexcept {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(last_heard_.time_since_epoch()).count());
  }
  // Whether no frame (Keepalives included) has come for `d`.
  [[nodiscard]] bool silent_for(std::chrono::milliseconds d) const noexcept {
    return std::chrono::steady_clock::now() - last_heard_ >= d;
  }

  // Both sides send their Hello, then read the peer's. On return the peer is
  // named by its Hello (rank when `size` > 0, host). Throws CtrlError kVersion
  // with both versions in one line when the peer speaks another protocol.
  // Then the shared-token check (token.hpp), all within `timeout`: throws
  // CtrlError kAuth when one end holds a token and the other none, or the
  // tokens differ. `mine.challenge` is set here (from `credentials`).
  Hello exchange_hello(const Hello& mine) { return exchange_hello(mine, options_.timeout); }
  Hello exchange_hello(const Hello& mine, std::chrono::milliseconds timeout) {
    return exchange_hello(mine, timeout, Credentials{});
  }
  Hello exchange_hello(const Hello& mine, std::chrono::milliseconds timeout, const Credentials& credentials);

  // Names the peer in messages: "peer rank 3 (host-b 10.0.0.2:41234)".
  void set_peer(std::optional<std::uint32_t> rank, std::string host);
  [[nodiscard]] std::string describe() const;
  [[nodiscard]] const std::string& peer_address() const noexcept { return peer_address_; }
  [[nodiscard]] const std::optional<std::uint32_t>& peer_rank() const noexcept { return peer_rank_; }
  [[nodiscard]] const std::string& peer_host() const noexcept { return peer_host_; }
  [[nodiscard]] const ChannelOptions& options() const noexcept { return options_; }
  void set_timeout(std::chrono::milliseconds timeout) noexcept { options_.timeout = timeout; }

  [[nodiscard]] int fd() const noexcept { return fd_; }
  [[nodiscard]] bool is_open() const noexcept { return fd_ >= 0; }
  void close() noexcept;

 private:
  Message recv_frames(std::chrono::milliseconds timeout, bool from_last_heard);
  void read_exact(std::uint8_t* buf, std::size_t n, std::chrono::steady_clock::time_point deadline,
                  std::chrono::milliseconds timeout, bool started);

  int fd_ = -1;
  ChannelOptions options_;
  std::chrono::steady_clock::time_point last_heard_ = std::chrono::steady_clock::now();
  std::string peer_address_;  // "10.0.0.2:41234" or "[fe80::1]:41234"
  std::optional<std::uint32_t> peer_rank_;
  std::string peer_host_;
};

class Listener {
 public:
  // host "" listens on every interface (IPv6 dual-stack where available, else
  // IPv4); port 0 picks a free port (see port()). SO_REUSEADDR is set, so a
  // restarted server does not wait out TIME_WAIT; a port held by a live
  // listener still fails: "port 18515 already in use (bind 0.0.0.0:18515)".
  [[nodiscard]] static Listener bind(const std::string& host, std::uint16_t port, int backlog = 128);

  Listener(Listener&& other) noexcept;
  Listener& operator=(Listener&& other) noexcept;
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;
  ~Listener();

  // One connection within `timeout`, or std::nullopt when none came.
  [[nodiscard]] std::optional<Channel> accept(std::chrono::milliseconds timeout, ChannelOptions options = {});

  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
  [[nodiscard]] const std::string& address() const noexcept { return address_; }  // "0.0.0.0:18515"
  [[nodiscard]] int fd() const noexcept { return fd_; }
  void close() noexcept;

 private:
  Listener(int fd, std::uint16_t port, std::string address);

  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::string address_;
};

}  // namespace fabench::ctrl
