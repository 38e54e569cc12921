#include "fabench/pair/server.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <ctime>
#include <functional>
#include <list>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "fabench/base/error.hpp"
#include "fabench/ctrl/wire.hpp"

namespace fabench::pair {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Connections whose Hello is still awaited; more are closed at once (a flood
// of idle connections must not exhaust threads).
constexpr std::size_t kMaxHandshakes = 64;
// How long a newcomer waits for a client that is leaving before it is told
// "busy": a client's goodbye and the release of its resources take moments.
constexpr milliseconds kBusyGrace{1000};

void try_tell(ctrl::Channel& ch, const std::string& text);

std::string wall_clock_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  return fmt::format("{:02}:{:02}:{:02}", tm.tm_hour, tm.tm_min, tm.tm_sec);
}

class Server {
 public:
  // `serve_one`: serves one handed-over client to its Goodbye or failure
  // (logging either, telling the client why it is dropped).
  using ServeOne = std::function<void(ctrl::Channel&)>;
  Server(ServeOne serve_one, const PeerOptions& o, const std::atomic<bool>& stop, bool once)
      : serve_one_(std::move(serve_one)), o_(o), stop_(stop), once_(once) {}

  void run(ctrl::Listener& listener) {
    std::jthread serving([this] { serve_clients(); });
    while (!over()) {
      reap_handshakes(false);
      ctrl::ChannelOptions copts;
      copts.timeout = o_.timeout;
      auto ch = listener.accept(milliseconds(200), copts);
      if (!ch) continue;
      if (handshakes_.size() >= kMaxHandshakes) {
        spdlog::error("connection from {}: {} handshakes already pending; closed it", ch->peer_address(),
                      kMaxHandshakes);
        continue;
      }
      auto& h = handshakes_.emplace_back();
      h.thread = std::jthread([this, &h, c = std::move(*ch)]() mutable {
        handshake(std::move(c));
        h.done = true;
      });
    }
    reap_handshakes(true);
    {
      const std::lock_guard lock(m_);
      ended_ = true;
    }
    cv_.notify_all();
    serving.join();
    if (!fatal_.empty()) throw RunError(fatal_);
  }

 private:
  struct Handshake {
    std::jthread thread;
    std::atomic<bool> done{false};
  };

  [[nodiscard]] bool over() const { return stop_.load(std::memory_order_relaxed) || finished_.load(); }

  void reap_handshakes(bool all) {
    for (auto it = handshakes_.begin(); it != handshakes_.end();) {
      if (all || it->done) {
        it->thread.join();
        it = handshakes_.erase(it);
      } else {
        ++it;
      }
    }
  }

  // A new connection: its Hello within the handshake timeout, then either the
  // serving thread takes it or it hears that the server is busy.
  void handshake(ctrl::Channel ch) {
    const std::string address = ch.peer_address();
    try {
      (void)ch.exchange_hello(pair_hello(), o_.handshake, ctrl::Credentials{o_.token, true});
    } catch (const ctrl::CtrlError& e) {
      if (e.kind() != ctrl::CtrlError::Kind::kAuth) return drop_before_hello(ch, address, e.what());
      // The token check has told the client already (or it knows from our Hello).
      spdlog::error("connection from {}: {}; dropped it", address, e.what());
      return;
    } catch (const std::exception& e) {
      return drop_before_hello(ch, address, e.what());
    }
    std::unique_lock lock(m_);
    if (cv_.wait_for(lock, kBusyGrace, [this] { return !busy_ || ended_; }) && !ended_) {
      busy_ = true;
      serving_ = ch.describe();
      since_ = Clock::now();
      since_text_ = wall_clock_now();
      next_.emplace(std::move(ch));
      lock.unlock();
      cv_.notify_all();
      return;
    }
    const auto held = std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - since_).count();
    const std::string text = ended_ ? std::string("server is shutting down")
                                    : fmt::format("busy: serving {} since {} ({} s); try again later", serving_,
                                                  since_text_, held);
    lock.unlock();
    spdlog::info("client {} refused: {}", ch.describe(), text);
    try_tell(ch, text);
  }

  void drop_before_hello(ctrl::Channel& ch, const std::string& address, const std::string& why) const {
    spdlog::error("connection from {}: {}; dropped it before a valid Hello (handshake timeout {})", address, why,
                  ctrl::format_duration(o_.handshake));
    try_tell(ch, why);
  }

  void serve_clients() {
    for (;;) {
      std::unique_lock lock(m_);
      cv_.wait(lock, [this] { return next_.has_value() || ended_; });
      if (!next_) return;
      ctrl::Channel ch = std::move(*next_);
      next_.reset();
      lock.unlock();
      try {
        serve_one_(ch);
      } catch (const std::exception& e) {
        // No client can be served any more (the serving process is gone).
        spdlog::error("client {}: {}; the server stops", ch.describe(), e.what());
        try_tell(ch, fmt::format("server: {}", e.what()));
        lock.lock();
        fatal_ = e.what();
        finished_ = true;
        ended_ = true;  // a handshake waiting for its turn hears that the server is shutting down
        lock.unlock();
        cv_.notify_all();
        return;
      }
      lock.lock();
      busy_ = false;
      if (once_) finished_ = true;
      lock.unlock();
      cv_.notify_all();
      if (once_) return;
    }
  }

  ServeOne serve_one_;
  const PeerOptions& o_;
  const std::atomic<bool>& stop_;
  const bool once_;
  std::atomic<bool> finished_{false};  // once: the one client is done
  std::list<Handshake> handshakes_;    // acceptor thread only

  std::mutex m_;
  std::condition_variable cv_;
  std::optional<ctrl::Channel> next_;  // handed from a handshake to the serving thread
  bool busy_ = false;                  // a client is handed over or being served
  bool ended_ = false;                 // the accept loop is over: no more clients
  std::string serving_;
  Clock::time_point since_;
  std::string since_text_;
  std::string fatal_;  // why no client can be served any more
};

void try_tell(ctrl::Channel& ch, const std::string& text) {
  try {
    ch.send(ctrl::Error{text}, milliseconds(200));
  } catch (const std::exception&) {
    // it is gone: nothing more to tell it
  }
}

// try_tell, then a close that lets the client read it: our FIN follows the
// Error, and what the client still sends (Keepalives, its next command) is
// read and dropped until it closes, for at most kTellLinger. A close with
// unread bytes would send a reset, and a reset can discard the Error before
// the client has read it.
constexpr milliseconds kTellLinger{1000};
void tell_and_close(ctrl::Channel& ch, const std::string& text) {
  try_tell(ch, text);
  if (!ch.is_open()) return;
  (void)::shutdown(ch.fd(), SHUT_WR);
  const auto deadline = Clock::now() + kTellLinger;
  std::array<char, 4096> sink{};
  for (auto now = Clock::now(); now < deadline; now = Clock::now()) {
    pollfd p{ch.fd(), POLLIN, 0};
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - now).count();
    if (::poll(&p, 1, static_cast<int>(left) + 1) == 0) break;
    const ssize_t n = ::recv(ch.fd(), sink.data(), sink.size(), MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) break;
  }
  ch.close();
}

}  // namespace

bool serve_client(ctrl::Channel& ch, const harness::Context& ctx, const PeerOptions& options) {
  const std::string who = ch.describe();
  try {
    spdlog::info("client {} connected", who);
    follow(ch, ctx, options);
    spdlog::info("client {} said goodbye", who);
    return true;
  } catch (const std::exception& e) {
    // follow() has released the client's QPs and memory on the way out.
    spdlog::error("client {}: {}; dropped it, serving the next", who, e.what());
    try_tell(ch, e.what());
    return false;
  }
}

ctrl::ServingProcess::Body client_process_body(harness::ContextOptions context, PeerOptions options) {
  return [context = std::move(context), options = std::move(options)](ctrl::Channel& ch) {
    std::optional<harness::Context> ctx;
    try {
      ctx.emplace(context);
    } catch (const std::exception& e) {
      spdlog::error("client {}: {}; dropped it, serving the next", ch.describe(), e.what());
      try_tell(ch, fmt::format("server: {}", e.what()));
      return 1;
    }
    return serve_client(ch, *ctx, options) ? 0 : 1;
  };
}

void serve(ctrl::Listener& listener, const harness::Context& ctx, const PeerOptions& options,
           const std::atomic<bool>& stop, bool once) {
  Server([&](ctrl::Channel& ch) { (void)serve_client(ch, ctx, options); }, options, stop, once).run(listener);
}

void serve(ctrl::Listener& listener, ctrl::ServingProcess& processes, const PeerOptions& options,
           const std::atomic<bool>& stop, bool once) {
  auto one = [&processes](ctrl::Channel& ch) {
    const auto out = processes.serve(ch);  // throws when no client can be served any more
    if (out.clean()) return;               // it logged the client's goodbye or why it dropped it
    spdlog::error("client {}: its serving process (pid {}) {}; dropped it, serving the next", ch.describe(), out.pid,
                  out.describe());
    tell_and_close(ch, fmt::format("server: the process serving this client {}", out.describe()));
  };
  Server(one, options, stop, once).run(listener);
}

}  // namespace fabench::pair
