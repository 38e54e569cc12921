#include "fabench/ctrl/channel.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>

#include "fabench/ctrl/token.hpp"
#include "socket_util.hpp"

namespace fabench::ctrl {
namespace {
using namespace detail;  // NOLINT(google-build-using-namespace): the file-local helpers
}  // namespace

std::string format_duration(milliseconds d) {
  const auto ms = d.count();
  if (ms % 1000 == 0) return fmt::format("{} s", ms / 1000);
  if (ms < 1000) return fmt::format("{} ms", ms);
  return fmt::format("{:g} s", static_cast<double>(ms) / 1000.0);
}

// ---------------------------------------------------------------- Channel

Channel Channel::connect(const std::string& host, std::uint16_t port, milliseconds retry_for, ChannelOptions options) {
  const auto deadline = Clock::now() + retry_for;
  auto backoff = milliseconds(50);
  std::string last_error = "no address";
  std::string last_address;
  for (;;) {
    int rc = 0;
    AddrInfo ai(host, port, 0, &rc);
    if (rc == EAI_AGAIN) {
      last_error = "cannot resolve host '" + host + "': " + gai_text(rc);
    } else if (rc != 0) {
      throw CtrlError(CtrlError::Kind::kNetwork, fmt::format("cannot resolve host '{}': {}", host, gai_text(rc)));
    } else {
      for (const addrinfo* p = ai.get(); p != nullptr; p = p->ai_next) {
        // Each attempt gets at most 5 s, so one black-holed address does not
        // use up the whole deadline before the next one is tried.
        const auto attempt_deadline = std::min(deadline, Clock::now() + std::chrono::seconds(5));
        last_address = format_sockaddr(p->ai_addr, p->ai_addrlen);
        const int fd = try_connect(p, attempt_deadline, last_error, options.source_address);
        if (fd >= 0) return Channel(fd, options);
      }
    }
    const auto now = Clock::now();
    if (now >= deadline) break;
    std::this_thread::sleep_for(std::min<Clock::duration>(backoff, deadline - now));
    backoff = std::min(backoff * 2, milliseconds(1000));
  }
  const std::string target = fmt::format("{}:{}", host.find(':') != std::string::npos ? "[" + host + "]" : host, port);
  const std::string via = (last_address.empty() || last_address == target) ? "" : " (" + last_address + ")";
  throw CtrlError(CtrlError::Kind::kNetwork,
                  fmt::format("cannot connect to {}{}: {}{}", target, via, last_error,
                              retry_for.count() > 0 ? "; retried for " + format_duration(retry_for) : ""));
}

Channel::Channel(int fd, ChannelOptions options) : fd_(fd), options_(options) {
  try {
    set_nonblocking(fd_);
  } catch (...) {
    ::close(fd_);
    throw;
  }
  const int one = 1;
  // Not a TCP socket (a socketpair in tests) is fine: the option only matters for TCP.
  (void)::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  (void)::setsockopt(fd_, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
  peer_address_ = peer_address_of(fd_);
}

Channel::Channel(Channel&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      options_(other.options_),
      last_heard_(other.last_heard_),
      peer_address_(std::move(other.peer_address_)),
      peer_rank_(other.peer_rank_),
      peer_host_(std::move(other.peer_host_)) {}

Channel& Channel::operator=(Channel&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = std::exchange(other.fd_, -1);
    options_ = other.options_;
    last_heard_ = other.last_heard_;
    peer_address_ = std::move(other.peer_address_);
    peer_rank_ = other.peer_rank_;
    peer_host_ = std::move(other.peer_host_);
  }
  return *this;
}

Channel::~Channel() { close(); }

void Channel::close() noexcept {
  if (fd_ >= 0) {
    if (::close(fd_) != 0) spdlog::debug("close({}) of {}: {}", fd_, describe(), std::strerror(errno));
    fd_ = -1;
  }
}

void Channel::set_peer(std::optional<std::uint32_t> rank, std::string host) {
  peer_rank_ = rank;
  peer_host_ = std::move(host);
}

std::string Channel::describe() const {
  if (peer_rank_ && !peer_host_.empty()) {
    return fmt::format("peer rank {} ({} {})", *peer_rank_, peer_host_, peer_address_);
  }
  if (peer_rank_) return fmt::format("peer rank {} ({})", *peer_rank_, peer_address_);
  if (!peer_host_.empty()) return fmt::format("peer {} ({})", peer_host_, peer_address_);
  return "peer " + peer_address_;
}

void Channel::send(const Message& msg, milliseconds timeout) {
  if (fd_ < 0) throw CtrlError(CtrlError::Kind::kClosed, "send on a closed channel to " + describe());
  const auto frame = encode(msg, options_.max_payload_bytes);
  const auto deadline = Clock::now() + timeout;
  std::size_t sent = 0;
  while (sent < frame.size()) {
    const ssize_t n = ::send(fd_, frame.data() + sent, frame.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
      continue;
    }
    const int err = errno;
    if (err == EINTR) continue;
    if (err == EPIPE || err == ECONNRESET) {
      throw CtrlError(CtrlError::Kind::kClosed, describe() + " closed the connection");
    }
    if (err != EAGAIN && err != EWOULDBLOCK) {
      throw CtrlError(CtrlError::Kind::kNetwork, fmt::format("send to {}: {}", describe(), errno_text(err)));
    }
    for (;;) {
      if (Clock::now() >= deadline) {
        throw CtrlError(CtrlError::Kind::kTimeout, fmt::format("{} accepted no data for {} (sending {})", describe(),
                                                               format_duration(timeout), type_name(type_of(msg))));
      }
      pollfd p{fd_, POLLOUT, 0};
      const int rc = ::poll(&p, 1, poll_ms(deadline));
      if (rc > 0) break;
      if (rc < 0 && errno != EINTR) {
        throw CtrlError(CtrlError::Kind::kNetwork, "poll: " + errno_text(errno));
      }
    }
  }
}

void Channel::read_exact(std::uint8_t* buf, std::size_t n, Clock::time_point deadline, milliseconds timeout,
                         bool started) {
  std::size_t got = 0;
  while (got < n) {
    const ssize_t r = ::recv(fd_, buf + got, n - got, 0);
    if (r > 0) {
      got += static_cast<std::size_t>(r);
      continue;
    }
    if (r == 0) {
      throw CtrlError(CtrlError::Kind::kClosed,
                      describe() + ((started || got > 0) ? " closed the connection in the middle of a message"
                                                         : " closed the connection"));
    }
    const int err = errno;
    if (err == EINTR) continue;
    if (err == ECONNRESET) {  // it closed with our data unread: to the user, the same thing
      throw CtrlError(CtrlError::Kind::kClosed,
                      describe() + ((started || got > 0) ? " closed the connection in the middle of a message"
                                                         : " closed the connection"));
    }
    if (err != EAGAIN && err != EWOULDBLOCK) {
      throw CtrlError(CtrlError::Kind::kNetwork, fmt::format("recv from {}: {}", describe(), errno_text(err)));
    }
    for (;;) {
      if (Clock::now() >= deadline) {
        throw CtrlError(CtrlError::Kind::kTimeout,
                        fmt::format("{} silent for {}{}", describe(), format_duration(timeout),
                                    (started || got > 0) ? " in the middle of a message" : ""));
      }
      pollfd p{fd_, POLLIN, 0};
      const int rc = ::poll(&p, 1, poll_ms(deadline));
      if (rc > 0) break;  // readable, hung up or in error: recv() says which
      if (rc < 0 && errno != EINTR) {
        throw CtrlError(CtrlError::Kind::kNetwork, "poll: " + errno_text(errno));
      }
    }
  }
}

Message Channel::recv(milliseconds timeout) { return recv_frames(timeout, false); }

Message Channel::recv_live(milliseconds silence) { return recv_frames(silence, true); }

Message Channel::recv_frames(milliseconds timeout, bool from_last_heard) {
  if (fd_ < 0) throw CtrlError(CtrlError::Kind::kClosed, "recv on a closed channel from " + describe());
  for (;;) {
    const auto deadline = (from_last_heard ? last_heard_ : Clock::now()) + timeout;
    std::array<std::uint8_t, kHeaderBytes> header_bytes{};
    read_exact(header_bytes.data(), header_bytes.size(), deadline, timeout, false);
    FrameHeader header;
    try {
      header = decode_header(header_bytes, options_.max_payload_bytes);
    } catch (const CtrlError& e) {
      throw CtrlError(e.kind(), fmt::format("{} (from {})", e.what(), describe()));
    }
    std::vector<std::uint8_t> payload(header.payload_bytes);
    read_exact(payload.data(), payload.size(), deadline, timeout, true);
    last_heard_ = Clock::now();
    Message msg;
    try {
      msg = decode_payload(header, payload);
    } catch (const CtrlError& e) {
      throw CtrlError(e.kind(), fmt::format("{} (from {})", e.what(), describe()));
    }
    if (!std::holds_alternative<Keepalive>(msg)) return msg;
  }
}

namespace {
// Whether the peer has shut its side down (FIN or reset), whatever is still unread.
bool peer_hung_up(int fd) noexcept {
  pollfd p{fd, POLLRDHUP, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}
}  // namespace

Channel::Incoming Channel::poll_incoming() noexcept {
  if (fd_ < 0) return Incoming::kClosed;
  for (;;) {
    std::array<std::uint8_t, kHeaderBytes> h{};
    const ssize_t n = ::recv(fd_, h.data(), h.size(), MSG_PEEK | MSG_DONTWAIT);
    if (n == 0) return Incoming::kClosed;
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return Incoming::kNothing;
      return Incoming::kClosed;  // reset or worse: recv() will name it
    }
    // Part of a header: the rest is on its way, unless the peer has closed
    // (a FIN behind unread bytes does not make the peek return 0).
    if (static_cast<std::size_t>(n) < h.size()) return peer_hung_up(fd_) ? Incoming::kClosed : Incoming::kNothing;
    const auto magic = static_cast<std::uint32_t>(h[0] | (h[1] << 8) | (h[2] << 16) |
                                                  (static_cast<std::uint32_t>(h[3]) << 24));
    const auto type = static_cast<std::uint16_t>(h[6] | (h[7] << 8));
    const auto length = static_cast<std::uint32_t>(h[8] | (h[9] << 8) | (h[10] << 16) |
                                                   (static_cast<std::uint32_t>(h[11]) << 24));
    const auto version = static_cast<std::uint16_t>(h[4] | (h[5] << 8));
    if (magic != kMagic || type != static_cast<std::uint16_t>(MsgType::kKeepalive) || length != 0 ||
        version != kProtocolVersion) {
      return Incoming::kMessage;  // a real message, or garbage that recv() will report
    }
    // A whole Keepalive (header only) is in the buffer: take it.
    if (::recv(fd_, h.data(), h.size(), MSG_DONTWAIT) != static_cast<ssize_t>(h.size())) return Incoming::kClosed;
    last_heard_ = Clock::now();
  }
}

Hello Channel::exchange_hello(const Hello& hello_in, milliseconds timeout, const Credentials& credentials) {
  const auto deadline = Clock::now() + timeout;
  Hello mine = hello_in;
  mine.challenge.clear();
  if (!credentials.token.empty()) {
    const auto nonce = random_nonce();
    mine.challenge.assign(nonce.begin(), nonce.end());
  }
  send(mine, timeout);
  Message reply = recv(timeout);
  if (const auto* err = std::get_if<Error>(&reply)) {
    throw CtrlError(CtrlError::Kind::kPeerError, fmt::format("{} refused us: {}", describe(), err->text));
  }
  auto* hello = std::get_if<Hello>(&reply);
  if (hello == nullptr) {
    throw CtrlError(CtrlError::Kind::kProtocol,
                    fmt::format("expected Hello from {}, got {}", describe(), type_name(type_of(reply))));
  }
  set_peer(hello->size > 0 ? std::optional<std::uint32_t>(hello->rank) : std::nullopt, hello->host_name);
  if (hello->protocol_version != kProtocolVersion) {
    throw CtrlError(
        CtrlError::Kind::kVersion,
        fmt::format("protocol version mismatch: {} runs fabench {} (control protocol v{}), this "
                    "process runs fabench {} (control protocol v{}); use the same fabench "
                    "version on every host",
                    describe(), hello->build_version, hello->protocol_version, build_version(), kProtocolVersion));
  }
  check_token(*this, mine, *hello, credentials, deadline);
  return *hello;
}

}  // namespace fabench::ctrl
