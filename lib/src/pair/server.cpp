#include "fabench/pair/server.hpp"

#include <chrono>
#include <condition_variable>
#include <ctime>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

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

std::string wall_clock_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  return fmt::format("{:02}:{:02}:{:02}", tm.tm_hour, tm.tm_min, tm.tm_sec);
}

class Server {
 public:
  Server(const harness::Context& ctx, const PeerOptions& o, const std::atomic<bool>& stop, bool once)
      : ctx_(ctx), o_(o), stop_(stop), once_(once) {}

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

  static void try_tell(ctrl::Channel& ch, const std::string& text) {
    try {
      ch.send(ctrl::Error{text}, milliseconds(200));
    } catch (const std::exception&) {
      // it is gone: nothing more to tell it
    }
  }

  void serve_clients() {
    for (;;) {
      std::unique_lock lock(m_);
      cv_.wait(lock, [this] { return next_.has_value() || ended_; });
      if (!next_) return;
      ctrl::Channel ch = std::move(*next_);
      next_.reset();
      lock.unlock();
      serve_one(ch);
      lock.lock();
      busy_ = false;
      if (once_) finished_ = true;
      lock.unlock();
      cv_.notify_all();
      if (once_) return;
    }
  }

  void serve_one(ctrl::Channel& ch) {
    const std::string who = ch.describe();
    try {
      spdlog::info("client {} connected", who);
      follow(ch, ctx_, o_);
      spdlog::info("client {} said goodbye", who);
    } catch (const std::exception& e) {
      // follow() has released the client's QPs and memory on the way out.
      spdlog::error("client {}: {}; dropped it, serving the next", who, e.what());
      try_tell(ch, e.what());
    }
  }

  const harness::Context& ctx_;
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
};

}  // namespace

void serve(ctrl::Listener& listener, const harness::Context& ctx, const PeerOptions& options,
           const std::atomic<bool>& stop, bool once) {
  Server(ctx, options, stop, once).run(listener);
}

}  // namespace fabench::pair
