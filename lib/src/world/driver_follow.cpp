// The followers' side of the session protocol (driver.hpp).
#include <iostream>
#include <mutex>
#include <variant>

#include <fmt/format.h>

#include "driver_util.hpp"
#include "fabench/ctrl/heartbeat.hpp"
#include "fabench/world/driver.hpp"

namespace fabench::world {

namespace {

class Follower {
 public:
  Follower(ctrl::Bootstrap& boot, Job& job, const DriverOptions& o)
      : boot_(boot), job_(job), o_(o), root_(boot.channel_to(0)) {}

  int loop() {
    for (;;) {
      // Rank 0 beats between runs too (driver.hpp): --timeout of silence means it is stopped.
      ctrl::Message msg;
      try {
        msg = root_.recv(o_.timeout);
      } catch (const ctrl::CtrlError& e) {
        if (e.kind() != ctrl::CtrlError::Kind::kTimeout) throw;
        return fail(fmt::format("rank 0 ({}) sent nothing for {} (stopped or unreachable) between runs",
                                boot_.hosts()[0], ctrl::format_duration(o_.timeout)));
      }
      if (const auto* e = std::get_if<ctrl::Error>(&msg)) return fail(e->text);
      const auto* c = std::get_if<ctrl::Command>(&msg);
      if (c == nullptr) return fail(fmt::format("rank 0 sent {} between runs", ctrl::type_name(ctrl::type_of(msg))));
      if (c->benchmark == "bye") return 0;
      if (c->benchmark != "run") return fail(fmt::format("rank 0 sent unknown command '{}'", c->benchmark));
      if (const int rc = run(*c); rc != 0) return rc;
    }
  }

  int fail(const std::string& text) const {
    std::cerr << fmt::format("{} rank {}: error: {}\n", o_.prog, boot_.rank(), text);
    return 1;
  }

 private:
  int run(const ctrl::Command& c) {
    Params params;
    std::size_t bench = 0;
    bool named = false;
    for (const auto& [k, v] : c.params) {
      if (k == "bench") {
        bench = std::stoul(v);
        named = true;
      } else {
        params.emplace_back(k, v);
      }
    }
    if (!named) return fail("rank 0 sent a run without a benchmark");
    RankReport ready;
    try {
      job_.prepare(bench, params);
    } catch (const std::exception& e) {
      ready.ok = false;
      ready.error = fmt::format("rank {}: {}", boot_.rank(), e.what());
    }
    if (ready.ok && job_.connects_per_run()) root_.send(ctrl::EndpointExchange{boot_.rank(), job_.endpoints()});
    root_.send(detail::to_result(c.sequence, ready));
    if (ready.ok && job_.connects_per_run()) {
      if (const int rc = connect(c.sequence); rc != 0) return rc;
    }
    ctrl::Message go = root_.recv(o_.timeout);
    if (const auto* e = std::get_if<ctrl::Error>(&go)) return fail(e->text);
    const auto* g = std::get_if<ctrl::Command>(&go);
    if (g == nullptr || g->benchmark != "go") return fail("rank 0 did not say go");
    // A job whose prepare() failed must not run (found by fuzz/world_follow).
    if (!ready.ok) return fail(fmt::format("{}; rank 0 said go regardless", ready.error));
    return go_run(g->sequence, c.iterations, job_.name(bench));
  }

  // The endpoints of the rank this one connects to (EndpointExchange from rank 0), connected.
  int connect(std::uint64_t seq) {
    ctrl::Message m = root_.recv(o_.timeout);
    if (const auto* e = std::get_if<ctrl::Error>(&m)) return fail(e->text);
    const auto* ex = std::get_if<ctrl::EndpointExchange>(&m);
    if (ex == nullptr) return fail(fmt::format("rank 0 sent {} for endpoints", ctrl::type_name(ctrl::type_of(m))));
    RankReport connected;
    try {
      job_.connect(ex->rank == boot_.rank() ? -1 : static_cast<int>(ex->rank), ex->endpoints);
    } catch (const std::exception& e) {
      connected.ok = false;
      connected.error = fmt::format("rank {}: {}", boot_.rank(), e.what());
    }
    root_.send(detail::to_result(seq, connected));
    return 0;
  }

  int go_run(std::uint64_t seq, std::uint64_t iterations, const std::string& what) {
    Watch watch;
    watch.stall = o_.timeout;
    watch.channels = {&root_};
    watch.on_message = Watch::OnMessage::kStop;  // rank 0 speaks mid-run only to abort
    watch.silence = o_.timeout;                  // rank 0's Heartbeat
    watch.spin_before_yield = o_.spin_before_yield;
    RankReport mine;
    {
      // Rank 0 waits on every rank at once until it has their results: its
      // Waiter and collect() take this rank's silence to mean it is stopped.
      std::mutex send_mutex;
      const ctrl::Heartbeat heartbeat({&root_}, send_mutex, ctrl::keepalive_interval(o_.timeout));
      mine = job_.run(iterations, watch);
    }
    if (!mine.ok && root_.poll_incoming() != ctrl::Channel::Incoming::kNothing) {
      // Rank 0 spoke or went away mid-run: its word (or its absence) is the news.
      try {
        ctrl::Message m = root_.recv(o_.timeout);
        if (const auto* e = std::get_if<ctrl::Error>(&m)) return fail(e->text);
        return fail(fmt::format("rank 0 sent {} during {}", ctrl::type_name(ctrl::type_of(m)), what));
      } catch (const std::exception& e) {
        return fail(fmt::format("{} during {}", e.what(), what));
      }
    }
    if (!mine.ok) mine.error = fmt::format("rank {}: {}", boot_.rank(), mine.error);
    if (!mine.ok && root_.silent_for(o_.timeout)) return root_silent(what, mine);
    root_.send(detail::to_result(seq, mine));
    if (mine.ok || o_.keep_going) return 0;
    // Rank 0 names the culprit after waiting up to 5 s for every rank's
    // word, sending Keepalives meanwhile; if it falls silent, it is the one stuck.
    try {
      ctrl::Message m = root_.recv_live(o_.timeout);
      if (const auto* e = std::get_if<ctrl::Error>(&m)) return fail(e->text);
      return fail(mine.error);
    } catch (const ctrl::CtrlError& e) {
      if (e.kind() == ctrl::CtrlError::Kind::kTimeout) return root_silent(what, mine);
      return fail(fmt::format("{}; then {}", mine.error, e.what()));
    }
  }

  // Rank 0 sent nothing, not even a Keepalive, for --timeout: it is the news, this rank's own failure the detail.
  int root_silent(const std::string& what, const RankReport& mine) const {
    return fail(fmt::format("rank 0 ({}) sent nothing for {} (stopped or unreachable) during {}; {}", boot_.hosts()[0],
                            ctrl::format_duration(o_.timeout), what, mine.error));
  }

  ctrl::Bootstrap& boot_;
  Job& job_;
  const DriverOptions& o_;
  ctrl::Channel& root_;
};

}  // namespace

int follow(ctrl::Bootstrap& boot, Job& job, const DriverOptions& options) {
  Follower f(boot, job, options);
  try {
    return f.loop();
  } catch (const std::exception& e) {
    return f.fail(e.what());
  }
}

}  // namespace fabench::world
