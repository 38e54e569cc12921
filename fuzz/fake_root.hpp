// Rank 0 of a Bootstrap world played by a thread of the fuzz target, over TCP
// loopback (ctrl_bootstrap, world_follow): it accepts one connection per
// input, in order, sends that input's bytes, closes its side for writing and
// reads until rank k hangs up. So rank k finds the whole stream and then its
// end, and no wait of its can time out. Each input ends with settle(): it
// waits until this thread has closed that input's connection and freed its
// stream, so every allocation of an input is also freed within it (else
// libFuzzer sees more mallocs than frees and runs a full leak scan on nearly
// every input: a fifth to a tenth of the speed).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "fabench/ctrl/bootstrap.hpp"
#include "fuzz_common.hpp"

namespace fuzz {

class FakeRoot {
 public:
  FakeRoot() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    FUZZ_CHECK(fd_ >= 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    FUZZ_CHECK(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    FUZZ_CHECK(::listen(fd_, 16) == 0);
    socklen_t len = sizeof a;
    FUZZ_CHECK(::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0);
    port_ = ntohs(a.sin_port);
    std::thread([this] { serve(); }).detach();
  }

  [[nodiscard]] std::uint16_t port() const { return port_; }

  void expect(std::vector<std::uint8_t> stream) {
    const std::lock_guard lock(mu_);
    FUZZ_CHECK(!next_ && served_ == expected_);  // the last input settled
    next_ = std::move(stream);
    ++expected_;
    cv_.notify_all();
  }

  // Call once rank k has closed its side: returns when every expected stream
  // has been served and freed; one never connected for is a failed check.
  void settle() {
    std::unique_lock lock(mu_);
    FUZZ_CHECK(cv_.wait_for(lock, std::chrono::seconds(5), [this] { return served_ == expected_; }));
  }

 private:
  void serve() {
    for (;;) {
      const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      std::vector<std::uint8_t> stream;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [this] { return next_.has_value(); });
        stream = std::move(*next_);
        next_.reset();
      }
      std::size_t sent = 0;
      while (sent < stream.size()) {
        const ssize_t w = ::send(c, stream.data() + sent, stream.size() - sent, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        sent += static_cast<std::size_t>(w);
      }
      ::shutdown(c, SHUT_WR);
      std::uint8_t sink[4096];
      for (;;) {
        const ssize_t r = ::recv(c, sink, sizeof sink, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
      }
      ::close(c);
      stream = {};
      const std::lock_guard lock(mu_);
      ++served_;
      cv_.notify_all();
    }
  }

  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  std::optional<std::vector<std::uint8_t>> next_;
  std::uint64_t expected_ = 0;
  std::uint64_t served_ = 0;
};

inline FakeRoot& root() {
  static auto* r = new FakeRoot();  // lives as long as the process (its thread never ends)
  return *r;
}

// Rank k's configuration from an input's bytes 0-1 (world size 2..8, a rank
// other than 0), with rank 0 played by root() sending `stream`.
inline fabench::ctrl::BootstrapConfig rank_config(const std::uint8_t* data, std::vector<std::uint8_t> stream) {
  fabench::ctrl::BootstrapConfig cfg;
  cfg.size = 2 + data[0] % 7;
  cfg.rank = 1 + data[1] % (cfg.size - 1);
  cfg.master_addr = "127.0.0.1";
  cfg.master_port = root().port();
  cfg.timeout = std::chrono::seconds(5);
  cfg.host_name = "fuzz-rank";
  root().expect(std::move(stream));
  return cfg;
}

}  // namespace fuzz
