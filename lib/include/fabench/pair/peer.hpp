// The pair protocol between a leader (the client: runs Google Benchmark) and
// a follower (the server: executes what it is told). Per benchmark the leader
// sends "setup" (a TestSpec) once, then per Google Benchmark call "run" with
// the iteration count, so adaptive counts stay in step on both ends:
//
//   leader                              follower
//   Command setup(spec)          ->     build Side (or refuse: Result kUnsupported)
//                                <-     Result ok, EndpointExchange(its QPs)
//   build Side
//   EndpointExchange(our QPs)    ->     connect
//   connect
//                                <-     Result ok
//   Command run(n)               ->     prepare (flags, receives)
//                                <-     Result ok ("ready")
//   run n iterations                    run n iterations (or nothing: one-sided)
//   Command finish               ->     check payload
//                                <-     Result values {ok, seconds, messages, bytes, received, wrong}
//   ... Goodbye                  ->     back to accepting the next client
//
// A latency spec with a load (fabench-lat --load, load.hpp) carries it as
// load_* params; both EndpointExchanges then list the spec's QPs followed by
// the load's. The follower starts its load thread (bidirectional loads only)
// before "ready" and stops it when "finish" comes; the leader starts its own
// after "ready", waits for the load's first completion, and stops it right
// after its latency loop. The follower's finish json then carries
// {"load": {"streams", "bytes", "seconds", "error"}}. A follower that knows
// no load sends only the spec's QPs: the leader says it does not support
// --load, and that benchmark alone fails.
//
// Counters (PeerOptions::counters): the leader's "run" carries the parameter
// counters=1; the follower then reads its port and hw counters
// (harness/counters.hpp) before it says "ready" and again when "finish"
// comes (outside the timed loop: before the run's traffic, after both ends'), and its
// finish Result carries {"counters": {NAME: delta, ...}, "counters_read": N}
// as json: the non-zero changes and how many counters it could read. The
// leader reads its own around the same points. A follower of an older
// version ignores the parameter and sends no json: no peer counters.
//
// Beside this, the leader sends a Keepalive about every second (a quarter of
// its --timeout below 4 s: ctrl::keepalive_interval) while it
// works between its messages (its run, a long fill or check of its buffers:
// ctrl::Pulse, from its only thread, so that the timed loop runs in a
// single-threaded process), and the follower watches its control socket even
// while it runs (RunLimits::leader). So a leader that dies is noticed at once
// in every phase, and one that is stopped (SIGSTOP) or cut off within the
// follower's timeout, even during a long one-sided run in which the follower
// itself has nothing to do.
//
// The follower does the same from its "ready" to its finish Result (the span
// in which it says nothing of its own; ctrl::Pulse too, from the thread of
// its serving process: its run's Watchdog, its wait for "finish", its check),
// and says so in its info ("run_keepalive": true). The leader then watches the follower's socket
// while it waits in a run (RunLimits::follower, only after 10 ms without
// progress) and waits for the finish Result as long as Keepalives come: a
// follower that dies is named at once, one that is stopped within --timeout.
// With a follower that does not say so, the leader waits 3 x --timeout for
// its result, as silence cannot tell a busy follower from a stopped one.
//
// A follower serves any spec from any client (with a token: any client that
// proves it, ctrl/token.hpp), one client at a time; a client that dies or
// sends garbage is logged and dropped, and the server goes on (server.hpp).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "fabench/ctrl/channel.hpp"
#include "fabench/ctrl/heartbeat.hpp"
#include "fabench/harness/context.hpp"
#include "fabench/harness/counters.hpp"
#include "fabench/harness/samples.hpp"
#include "fabench/pair/engines.hpp"
#include "fabench/pair/load.hpp"
#include "fabench/pair/side.hpp"

namespace fabench::pair {

struct PeerOptions {
  std::chrono::milliseconds timeout{30'000};   // control-plane waits and the engines' stall timeout
  std::uint64_t max_mem_bytes = 4ULL << 30;    // follower: largest buffer a client may ask for
  std::chrono::milliseconds handshake{3'000};  // server: a new connection's Hello must come within this
  std::string token;                           // shared secret both ends prove (ctrl/token.hpp); empty: none
  SideOptions side;                            // this end's own QP and buffer choices
  bool counters = false;                       // leader: read both ends' counters around each run
  harness::ClockSource clock = harness::ClockSource::kMonotonic;  // leader: latency timestamps (--clock)
};

// One end's counter changes over one run.
struct CounterReport {
  bool read = false;              // this end was asked and answered
  std::size_t available = 0;      // counters it could read (0: none exposed or readable)
  harness::CounterDeltas deltas;  // the non-zero changes, every counter (selection is the reporter's)
};

// What the follower tells the leader about its end, once per connection.
struct PeerInfo {
  std::string host;
  std::string device;
  std::string fw_ver;
  std::string link_layer;
  double port_rate_gbps = 0;
  std::uint32_t active_mtu_bytes = 0;
  std::string version;
  bool run_keepalive = false;  // it sends Keepalives during runs (its silence there means stopped)
};

// The Hello both ends of a pair send first.
[[nodiscard]] ctrl::Hello pair_hello();

// Serves one client on `channel` until Goodbye. Throws ctrl::CtrlError or
// std::runtime_error when the client breaks the protocol or vanishes.
void follow(ctrl::Channel& channel, const harness::Context& ctx, const PeerOptions& options);

class Leader {
 public:
  // Hello exchange and info query over a connected channel.
  Leader(ctrl::Channel channel, const harness::Context& ctx, const PeerOptions& options);
  ~Leader();
  Leader(const Leader&) = delete;
  Leader& operator=(const Leader&) = delete;

  [[nodiscard]] const PeerInfo& peer() const noexcept { return peer_; }
  // The resources of the last spec set up (nullptr before the first, or after a failure).
  [[nodiscard]] const Side* side() const noexcept { return side_.get(); }

  struct Outcome {
    RunResult mine;
    RunResult theirs;
    CounterReport my_counters;     // with PeerOptions::counters
    CounterReport their_counters;  // idem, when the follower sent them
    // With a load: the leader's bytes over its latency loop's span, and the
    // follower's (bidirectional) over its span from "ready" to "finish".
    LoadResult my_load;
    LoadResult their_load;
  };
  // Sets up (when spec differs from the last) and runs `iterations` on both
  // ends. `samples` must have capacity for `iterations` (latency only).
  // Throws on any failure, with the peer named; a failure of the pair's
  // connection marks the peer dead (see dead()).
  Outcome run(const TestSpec& spec, std::uint64_t iterations, harness::Samples* samples);

  [[nodiscard]] bool dead() const noexcept { return !dead_reason_.empty(); }
  [[nodiscard]] const std::string& dead_reason() const noexcept { return dead_reason_; }
  // Orderly end; harmless when the peer is already gone.
  void goodbye() noexcept;
  // A Keepalive to the follower when one is due (about one a second): for
  // the caller's own long steps between runs (a large sample buffer, a wait),
  // since the leader keeps no heartbeat thread (ctrl::Pulse).
  void keepalive() noexcept { pulse_.beat(); }

 private:
  void setup(const TestSpec& spec);
  void build_local(const TestSpec& spec, const ctrl::Result& r, std::size_t remote_offered,
                   std::unique_ptr<Side>& side, std::unique_ptr<LoadStream>& load);
  [[nodiscard]] std::string finish_run(Outcome& out, const harness::Counters& before);
  void connect_cm(Side& side, const ctrl::Result& setup_result);
  // The follower's json beside its setup "ok" (cm_port, reversed): an object, empty when it sent none.
  [[nodiscard]] nlohmann::json setup_reply(const ctrl::Result& setup_result) const;
  void drop() noexcept;
  RunResult run_loaded(std::uint64_t iterations, harness::Samples* samples, const RunLimits& limits, LoadResult& load);
  void send(const ctrl::Message& msg);
  ctrl::Result call(const std::string& what, std::vector<std::pair<std::string, std::string>> params,
                    std::uint64_t iterations, std::chrono::milliseconds timeout);
  ctrl::Result await_result(std::uint64_t sequence, std::chrono::milliseconds timeout);

  ctrl::Channel channel_;
  const harness::Context& ctx_;
  PeerOptions options_;
  PeerInfo peer_;
  std::unique_ptr<Side> side_;
  std::unique_ptr<LoadStream> load_;  // the spec's load, when it has one
  std::optional<TestSpec> spec_;
  std::uint64_t sequence_ = 0;
  std::string dead_reason_;
  // Keepalives to the follower, sent from this (the only) thread: by the
  // run's Watchdog, between the steps of a set-up and through a long fill or
  // check. A heartbeat thread would make every system call of the timed
  // loop slower on a software provider (ctrl::Pulse).
  ctrl::Pulse pulse_{channel_, ctrl::keepalive_interval(options_.timeout)};  // after options_
};

}  // namespace fabench::pair
