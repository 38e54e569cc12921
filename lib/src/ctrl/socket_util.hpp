// Socket helpers of the control plane's Channel (channel.cpp) and Listener (listener.cpp):
// deadlines in poll() milliseconds, address text, non-blocking connects from a chosen source.
// Internal to lib/ctrl.
#pragma once

#include "fabench/ctrl/channel.hpp"
#include "fabench/ctrl/error.hpp"

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

namespace fabench::ctrl::detail {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

inline std::string errno_text(int err) { return std::strerror(err); }

// Milliseconds left until `deadline`, rounded up so poll() never wakes early
// and spins; 0 when it has passed.
inline int poll_ms(Clock::time_point deadline) {
  const auto left = deadline - Clock::now();
  if (left <= Clock::duration::zero()) return 0;
  const auto ms = std::chrono::ceil<milliseconds>(left).count();
  return static_cast<int>(std::min<long long>(ms, 1'000'000'000));
}

// "10.0.0.2:18515", "[fe80::1]:18515"; an IPv4-mapped IPv6 address (from a
// dual-stack listener) is shown as the IPv4 address it is.
inline std::string format_sockaddr(const sockaddr* sa, socklen_t len) {
  if (sa->sa_family == AF_UNIX) return "local socket";
  std::array<char, NI_MAXHOST> host{};
  std::array<char, NI_MAXSERV> serv{};
  if (::getnameinfo(sa, len, host.data(), host.size(), serv.data(), serv.size(), NI_NUMERICHOST | NI_NUMERICSERV) !=
      0) {
    return "unknown address";
  }
  std::string h = host.data();
  if (sa->sa_family == AF_INET6) {
    constexpr std::string_view kMapped = "::ffff:";
    if (h.starts_with(kMapped) && h.find('.') != std::string::npos) {
      h.erase(0, kMapped.size());
    } else {
      h = "[" + h + "]";
    }
  }
  return h + ":" + serv.data();
}

inline std::string peer_address_of(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "unknown address";
  return format_sockaddr(reinterpret_cast<const sockaddr*>(&ss), len);
}

inline void set_nonblocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL, 0);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    throw CtrlError(CtrlError::Kind::kNetwork, "fcntl(O_NONBLOCK): " + errno_text(errno));
  }
}

class AddrInfo {
 public:
  AddrInfo(const std::string& host, std::uint16_t port, int flags, int* rc) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = flags | AI_NUMERICSERV;
    const std::string service = std::to_string(port);
    *rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &res_);
    if (*rc != 0) res_ = nullptr;
  }
  AddrInfo(const AddrInfo&) = delete;
  AddrInfo& operator=(const AddrInfo&) = delete;
  ~AddrInfo() {
    if (res_ != nullptr) ::freeaddrinfo(res_);
  }
  [[nodiscard]] const addrinfo* get() const { return res_; }

 private:
  addrinfo* res_ = nullptr;
};

inline std::string gai_text(int rc) { return rc == EAI_SYSTEM ? errno_text(errno) : ::gai_strerror(rc); }

struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  int release() { return std::exchange(fd, -1); }
};

// Binds `s` to the local IP `source` (ChannelOptions::source_address).
// A source that cannot be used will not become usable by retrying: throws.
inline void bind_source(int s, int family, const std::string& source) {
  sockaddr_storage sa{};
  socklen_t len = 0;
  bool ok = false;
  if (family == AF_INET) {
    auto* a = reinterpret_cast<sockaddr_in*>(&sa);
    a->sin_family = AF_INET;
    ok = ::inet_pton(AF_INET, source.c_str(), &a->sin_addr) == 1;
    len = sizeof *a;
  } else if (family == AF_INET6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&sa);
    a->sin6_family = AF_INET6;
    ok = ::inet_pton(AF_INET6, source.c_str(), &a->sin6_addr) == 1;
    len = sizeof *a;
  }
  if (!ok) {
    throw CtrlError(CtrlError::Kind::kNetwork, fmt::format("source address '{}' is not an {} address, as the peer's is",
                                                           source, family == AF_INET6 ? "IPv6" : "IPv4"));
  }
  if (::bind(s, reinterpret_cast<sockaddr*>(&sa), len) != 0) {
    throw CtrlError(
        CtrlError::Kind::kNetwork,
        fmt::format("cannot use source address {}: {} (is it an address of this host?)", source, errno_text(errno)));
  }
}

// One non-blocking connect attempt to one address, bounded by `deadline`.
// Returns the connected socket, or -1 with `error` set.
inline int try_connect(const addrinfo* ai, Clock::time_point deadline, std::string& error, const std::string& source) {
  Fd s(::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol));
  if (s.fd < 0) {
    error = errno_text(errno);
    return -1;
  }
  if (!source.empty()) bind_source(s.fd, ai->ai_family, source);
  if (::connect(s.fd, ai->ai_addr, ai->ai_addrlen) == 0) return s.release();
  if (errno != EINPROGRESS && errno != EINTR) {
    error = errno_text(errno);
    return -1;
  }
  for (;;) {
    pollfd p{s.fd, POLLOUT, 0};
    const int rc = ::poll(&p, 1, poll_ms(deadline));
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0) {
      error = "poll: " + errno_text(errno);
      return -1;
    }
    if (rc == 0) {
      error = "connection attempt timed out";
      return -1;
    }
    int err = 0;
    socklen_t len = sizeof err;
    if (::getsockopt(s.fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    if (err != 0) {
      error = errno_text(err);
      return -1;
    }
    return s.release();
  }
}

}  // namespace fabench::ctrl::detail
