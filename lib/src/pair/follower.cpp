// The follower: serves one leader's commands ("info", "setup", "run" and
// "finish") on a control channel, for fabench-lat/-bw servers.
#include <poll.h>

#include <algorithm>
#include <stdexcept>
#include <variant>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "fabench/ctrl/heartbeat.hpp"
#include "fabench/ctrl/wire.hpp"
#include "fabench/harness/loop.hpp"
#include "fabench/pair/cm_link.hpp"
#include "fabench/pair/peer.hpp"
#include "fabench/verbs/port.hpp"
#include "peer_util.hpp"

namespace fabench::pair {

namespace {

using peer_util::all_endpoints;
using peer_util::connect_all;
using peer_util::expect_endpoints;
using peer_util::finish_json;
using peer_util::own_counters;
using std::chrono::milliseconds;

ctrl::Result result(std::uint64_t seq, ctrl::ResultStatus status = ctrl::ResultStatus::kOk, std::string error = {}) {
  ctrl::Result r;
  r.sequence = seq;
  r.status = status;
  r.error = std::move(error);
  return r;
}

std::string info_json(const harness::Context& ctx) {
  const auto& a = ctx.attributes();
  const auto& p = ctx.port();
  nlohmann::json j = {
      {"host", ctrl::local_host_name()},
      {"device", a.name},
      {"fw_ver", a.fw_ver},
      {"link_layer", p.link_layer_name},
      {"port_rate_gbps", p.rate_gbps},
      {"active_mtu_bytes", p.active_mtu_bytes},
      {"version", std::string(ctrl::build_version())},
      // Keepalives from "ready" to the run's result: the leader may treat
      // silence in a run as a stopped follower (peer.hpp).
      {"run_keepalive", true},
  };
  return j.dump();
}

ctrl::Command expect_command(ctrl::Message msg, const ctrl::Channel& ch) {
  if (auto* c = std::get_if<ctrl::Command>(&msg)) return std::move(*c);
  if (auto* e = std::get_if<ctrl::Error>(&msg)) {
    throw ctrl::CtrlError(ctrl::CtrlError::Kind::kPeerError, fmt::format("{} gave up: {}", ch.describe(), e->text));
  }
  throw ctrl::CtrlError(
      ctrl::CtrlError::Kind::kProtocol,
      fmt::format("{} sent {} where a command was expected", ch.describe(), ctrl::type_name(ctrl::type_of(msg))));
}

// The leader's next message, as ch.recv(timeout) would wait for it (its
// Keepalives restart the wait), with `pulse` beaten meanwhile: a one-sided
// run's follower waits here through the leader's whole run.
ctrl::Message recv_beating(ctrl::Channel& ch, ctrl::Pulse& pulse, milliseconds timeout) {
  constexpr int kSliceMs = 250;  // well inside a Keepalive interval
  for (;;) {
    pulse.beat();
    if (ch.poll_incoming() != ctrl::Channel::Incoming::kNothing) return ch.recv(timeout);  // or its failure
    if (ch.silent_for(timeout)) return ch.recv_live(timeout);  // throws "silent for", naming the leader
    pollfd p{ch.fd(), POLLIN, 0};
    (void)::poll(&p, 1, kSliceMs);
  }
}

bool wants_counters(const ctrl::Command& cmd) {
  return std::any_of(cmd.params.begin(), cmd.params.end(),
                     [](const auto& kv) { return kv.first == "counters" && kv.second == "1"; });
}

// What a follower holds for the spec last set up: the latency or bandwidth
// Side and, for a latency spec with a load, the load's resources.
struct Setup {
  std::unique_ptr<Side> side;
  std::unique_ptr<LoadStream> load;
};

// What a follower answers to a setup it will not build (the device cannot,
// or its buffers exceed --max-mem); nullopt when it will build it.
std::optional<ctrl::Result> refusal(const harness::Context& ctx, const PeerOptions& o, const TestSpec& spec,
                                    std::uint64_t seq) {
  if (auto bad = check_device_limits(ctx, spec)) {
    return result(seq, ctrl::ResultStatus::kUnsupported,
                  fmt::format("server {}: {}", ctx.device().name(), bad->what()));
  }
  if (total_buffer_bytes(spec) > o.max_mem_bytes) {
    return result(seq, ctrl::ResultStatus::kUnsupported,
                  fmt::format("server refuses {} MiB of buffers for {}: above its --max-mem of {} MiB",
                              total_buffer_bytes(spec) >> 20, spec.name(), o.max_mem_bytes >> 20));
  }
  return std::nullopt;
}

// "setup": the previous Side goes, then the new one is built and connected,
// or the leader hears why not (a refusal keeps the conversation going).
Setup follow_setup(ctrl::Channel& ch, const harness::Context& ctx, const PeerOptions& o, const ctrl::Command& cmd) {
  const auto seq = cmd.sequence;
  TestSpec spec;
  try {
    spec = TestSpec::from_params(cmd.params);
  } catch (const std::exception& e) {
    ch.send(result(seq, ctrl::ResultStatus::kFailed, e.what()));
    return {};
  }
  if (auto no = refusal(ctx, o, spec, seq)) {
    ch.send(*no);
    return {};
  }
  Setup setup;
  std::unique_ptr<CmAcceptor> acceptor;  // -R: listening from before "ok" until the client has connected
  try {
    setup.side = std::make_unique<Side>(spec.rdma_cm ? ctx.rdma_cm() : ctx, spec, o.side);
    setup.side->fill_pattern(kFollowerSeed);
    if (spec.load) setup.load = std::make_unique<LoadStream>(ctx, spec, o.side, Role::kFollower);
    if (spec.rdma_cm) acceptor = std::make_unique<CmAcceptor>(*setup.side, socket_address(ch.fd(), false));
  } catch (const std::exception& e) {
    ch.send(result(seq, ctrl::ResultStatus::kFailed, fmt::format("server: {}", e.what())));
    return {};
  }
  // What this follower does beyond a plain setup, so that the leader can
  // tell an older one that ignored it.
  nlohmann::json extra = nlohmann::json::object();
  if (acceptor) extra["cm_port"] = acceptor->port();
  if (spec.reversed) extra["reversed"] = true;
  auto ok = result(seq);
  if (!extra.empty()) ok.json = extra.dump();
  ch.send(ok);
  std::string cm_error;
  if (acceptor) {
    try {
      setup.side->adopt_cm(acceptor->accept(*setup.side, o.timeout));
    } catch (const std::exception& e) {
      cm_error = e.what();
    }
    acceptor.reset();
  }
  ch.send(ctrl::EndpointExchange{
      0, cm_error.empty() ? all_endpoints(*setup.side, setup.load.get()) : std::vector<verbs::Endpoint>{}});
  const auto remote = expect_endpoints(ch, o.timeout);
  if (!cm_error.empty()) {
    ch.send(result(seq, ctrl::ResultStatus::kFailed, fmt::format("server: {}", cm_error)));
    return {};
  }
  try {
    connect_all(*setup.side, setup.load.get(), remote);
    ch.send(result(seq));
  } catch (const std::exception& e) {
    ch.send(result(seq, ctrl::ResultStatus::kFailed, fmt::format("server: {}", e.what())));
    return {};
  }
  return setup;
}

// Stops the bidirectional load at "finish": its bytes and seconds since
// "ready" (b0 at t0); a failed load fails the run `mine`.
LoadResult stop_load(LoadStream* load, std::uint64_t b0, std::uint64_t t0, RunResult& mine) {
  if (load == nullptr) return {};
  const std::uint64_t b1 = load->bytes_done();
  const std::uint64_t t1 = harness::now_ns();
  LoadResult out = load->stop();
  out.bytes = b1 - b0;
  out.seconds = static_cast<double>(t1 - t0) / 1e9;
  if (mine.ok && !out.ok) {
    mine.ok = false;
    mine.error = fmt::format("load: {}", out.error);
  }
  return out;
}

// "run" then "finish": false when the Side is spent (its QPs in ERROR).
bool follow_run(ctrl::Channel& ch, const harness::Context& ctx, Setup& setup, const PeerOptions& o,
                const ctrl::Command& cmd) {
  Side& side = *setup.side;
  LoadStream* load = setup.load.get();
  const RunResult prep = prepare_run(side, Role::kFollower);
  if (!prep.ok) {
    ch.send(result(cmd.sequence, ctrl::ResultStatus::kFailed, fmt::format("server: {}", prep.error)));
    return false;
  }
  const bool counters = wants_counters(cmd);
  harness::Counters before;
  if (counters) before = own_counters(ctx);  // before "ready": no traffic of this run yet
  // A bidirectional load streams from here to "finish", around the leader's
  // whole latency run: its rate is measured over that span.
  if (load != nullptr) {
    if (auto bad = load->start(o.timeout); !bad.empty()) {
      ch.send(result(cmd.sequence, ctrl::ResultStatus::kFailed, fmt::format("server: load: {}", bad)));
      return false;
    }
  }
  const std::uint64_t load_b0 = load != nullptr ? load->bytes_done() : 0;
  const std::uint64_t load_t0 = harness::now_ns();
  ch.send(result(cmd.sequence));  // ready
  // From "ready" to the result this side says nothing of its own: Keepalives
  // tell the leader it is alive (checking a large buffer may take a while),
  // so that the leader may name a stopped follower within its timeout. They
  // come from this thread (the run's Watchdog, the wait for "finish", the
  // check), so that a serving process is one thread while it measures.
  ctrl::Pulse pulse(ch, ctrl::keepalive_interval(o.timeout));
  RunLimits limits{o.timeout};
  limits.leader = &ch;
  limits.keepalive = &pulse;
  RunResult mine = side.spec().kind == Kind::kLatency
                       ? run_latency(side, Role::kFollower, cmd.iterations, nullptr, limits)
                       : run_bandwidth(side, Role::kFollower, cmd.iterations, limits);
  if (mine.peer_lost) {
    throw ctrl::CtrlError(ctrl::CtrlError::Kind::kClosed, mine.error);
  }
  const ctrl::Command fin = expect_command(recv_beating(ch, pulse, o.timeout), ch);
  if (fin.benchmark != "finish") {
    throw ctrl::CtrlError(ctrl::CtrlError::Kind::kProtocol,
                          fmt::format("{} sent '{}' during a run", ch.describe(), fin.benchmark));
  }
  const LoadResult load_result = stop_load(load, load_b0, load_t0, mine);
  // "finish" comes after the leader's last completion: both ends' traffic is over.
  const harness::Counters after = counters ? own_counters(ctx) : harness::Counters{};
  if (mine.ok) mine.wrong += check_payload(side, Role::kFollower, cmd.iterations, &pulse);
  if (mine.ok && load != nullptr) mine.wrong += load->check_payload();
  auto r = result(fin.sequence, mine.ok ? ctrl::ResultStatus::kOk : ctrl::ResultStatus::kFailed,
                  mine.ok ? std::string{} : fmt::format("server: {}", mine.error));
  r.record = mine.to_record();
  if (counters || load != nullptr) r.json = finish_json(counters ? &before : nullptr, after, load, load_result);
  ch.send(r);
  return mine.ok;
}

}  // namespace

void follow(ctrl::Channel& ch, const harness::Context& ctx, const PeerOptions& o) {
  Setup setup;
  for (;;) {
    // The leader's Keepalives restart every wait (Channel::recv), so a leader
    // busy with statistics or a long one-sided run is never dropped, and a
    // stopped one is within the timeout.
    ctrl::Message msg = ch.recv(o.timeout);
    if (std::holds_alternative<ctrl::Goodbye>(msg)) return;
    const ctrl::Command cmd = expect_command(std::move(msg), ch);

    if (cmd.benchmark == "info") {
      auto r = result(cmd.sequence);
      r.json = info_json(ctx);
      ch.send(r);
    } else if (cmd.benchmark == "setup") {
      setup = Setup{};  // the previous configuration's QPs and memory go first
      setup = follow_setup(ch, ctx, o, cmd);
    } else if (cmd.benchmark == "run") {
      if (!setup.side) {
        ch.send(result(cmd.sequence, ctrl::ResultStatus::kFailed, "run before a successful setup"));
      } else if (!follow_run(ch, ctx, setup, o, cmd)) {
        setup = Setup{};  // its QPs are in the error state now
      }
    } else {
      ch.send(
          result(cmd.sequence, ctrl::ResultStatus::kUnsupported, fmt::format("unknown command '{}'", cmd.benchmark)));
    }
  }
}

}  // namespace fabench::pair
