// Listener: the control plane's listening socket (ctrl/channel.hpp).
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "fabench/ctrl/channel.hpp"
#include "socket_util.hpp"

namespace fabench::ctrl {

namespace {
using namespace detail;  // NOLINT(google-build-using-namespace)
}  // namespace

// ---------------------------------------------------------------- Listener

Listener::Listener(int fd, std::uint16_t port, std::string address)
    : fd_(fd), port_(port), address_(std::move(address)) {}

Listener::Listener(Listener&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), port_(other.port_), address_(std::move(other.address_)) {}

Listener& Listener::operator=(Listener&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = std::exchange(other.fd_, -1);
    port_ = other.port_;
    address_ = std::move(other.address_);
  }
  return *this;
}

Listener::~Listener() { close(); }

void Listener::close() noexcept {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

namespace {

// The socket to listen on and its address: every interface (one dual-stack IPv6 socket takes
// IPv4 clients too; a host without IPv6 gets an IPv4 socket) or `host` resolved.
struct ListenSocket {
  Fd s{-1};
  sockaddr_storage ss{};
  socklen_t len = 0;
  int family = AF_INET6;
};

void listen_socket(const std::string& host, std::uint16_t port, ListenSocket& e) {
  if (!host.empty()) {
    int rc = 0;
    AddrInfo ai(host, port, AI_PASSIVE, &rc);
    if (rc != 0) {
      throw CtrlError(CtrlError::Kind::kNetwork,
                      fmt::format("cannot resolve host '{}' to listen on: {}", host, gai_text(rc)));
    }
    const addrinfo* p = ai.get();
    e.family = p->ai_family;
    std::memcpy(&e.ss, p->ai_addr, p->ai_addrlen);
    e.len = p->ai_addrlen;
    e.s.fd = ::socket(e.family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    return;
  }
  e.s.fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (e.s.fd >= 0) {
    const int zero = 0;
    if (::setsockopt(e.s.fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero) != 0) ::close(e.s.release());
  }
  if (e.s.fd >= 0) {
    auto* a6 = reinterpret_cast<sockaddr_in6*>(&e.ss);
    a6->sin6_family = AF_INET6;
    a6->sin6_addr = in6addr_any;
    a6->sin6_port = htons(port);
    e.len = sizeof(sockaddr_in6);
    return;
  }
  e.family = AF_INET;
  e.s.fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  auto* a4 = reinterpret_cast<sockaddr_in*>(&e.ss);
  a4->sin_family = AF_INET;
  a4->sin_addr.s_addr = htonl(INADDR_ANY);
  a4->sin_port = htons(port);
  e.len = sizeof(sockaddr_in);
}

[[noreturn]] void bind_failed(const char* what, std::uint16_t port, const std::string& address, int err) {
  if (err == EADDRINUSE) {
    throw CtrlError(CtrlError::Kind::kNetwork, fmt::format("port {} already in use (bind {})", port, address));
  }
  throw CtrlError(CtrlError::Kind::kNetwork, fmt::format("cannot {} {}: {}", what, address, errno_text(err)));
}

}  // namespace

Listener Listener::bind(const std::string& host, std::uint16_t port, int backlog) {
  ListenSocket e;
  listen_socket(host, port, e);
  std::string address = format_sockaddr(reinterpret_cast<const sockaddr*>(&e.ss), e.len);
  if (host.empty() && e.family == AF_INET6) address = fmt::format("[::]:{}", port);
  if (e.s.fd < 0) {
    throw CtrlError(CtrlError::Kind::kNetwork, fmt::format("socket for {}: {}", address, errno_text(errno)));
  }
  const int one = 1;
  (void)::setsockopt(e.s.fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(e.s.fd, reinterpret_cast<const sockaddr*>(&e.ss), e.len) != 0) bind_failed("bind", port, address, errno);
  if (::listen(e.s.fd, backlog) != 0) bind_failed("listen on", port, address, errno);
  sockaddr_storage bound{};
  socklen_t bound_len = sizeof bound;
  std::uint16_t actual = port;
  if (::getsockname(e.s.fd, reinterpret_cast<sockaddr*>(&bound), &bound_len) == 0) {
    actual = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                         : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  }
  if (actual != port) {
    const auto colon = address.rfind(':');
    address = address.substr(0, colon) + ":" + std::to_string(actual);
  }
  return Listener(e.s.release(), actual, std::move(address));
}

std::optional<Channel> Listener::accept(milliseconds timeout, ChannelOptions options) {
  if (fd_ < 0) throw CtrlError(CtrlError::Kind::kClosed, "accept on a closed listener " + address_);
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    const int fd = ::accept4(fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) return Channel(fd, options);
    const int err = errno;
    // A client that gave up between SYN and accept, or a signal: wait on.
    if (err != EAGAIN && err != EWOULDBLOCK && err != EINTR && err != ECONNABORTED && err != EPROTO) {
      throw CtrlError(CtrlError::Kind::kNetwork, fmt::format("accept on {}: {}", address_, errno_text(err)));
    }
    if (Clock::now() >= deadline) return std::nullopt;
    pollfd p{fd_, POLLIN, 0};
    const int rc = ::poll(&p, 1, poll_ms(deadline));
    if (rc < 0 && errno != EINTR) {
      throw CtrlError(CtrlError::Kind::kNetwork, "poll: " + errno_text(errno));
    }
  }
}

}  // namespace fabench::ctrl
