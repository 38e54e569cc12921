// The leader: drives one follower through setup, runs and finish, and
// gathers both ends' results (fabench-lat/-bw clients).
#include <algorithm>
#include <stdexcept>
#include <variant>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "fabench/base/error.hpp"
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
using peer_util::from_result;
using peer_util::own_counters;
using peer_util::own_report;
using peer_util::parse_counters;
using peer_util::parse_finish;
using peer_util::parse_load;
using std::chrono::milliseconds;

}  // namespace

Leader::Leader(ctrl::Channel channel, const harness::Context& ctx, const PeerOptions& options)
    : channel_(std::move(channel)), ctx_(ctx), options_(options) {
  (void)channel_.exchange_hello(pair_hello(), options_.timeout, ctrl::Credentials{options_.token, false});
  const auto r = call("info", {}, 0, options_.timeout);
  try {
    const auto j = nlohmann::json::parse(r.json);
    peer_.host = j.value("host", "");
    peer_.device = j.value("device", "");
    peer_.fw_ver = j.value("fw_ver", "");
    peer_.link_layer = j.value("link_layer", "");
    peer_.port_rate_gbps = j.value("port_rate_gbps", 0.0);
    peer_.active_mtu_bytes = j.value("active_mtu_bytes", 0U);
    peer_.version = j.value("version", "");
    peer_.run_keepalive = j.value("run_keepalive", false);
  } catch (const nlohmann::json::exception& e) {
    throw ctrl::CtrlError(ctrl::CtrlError::Kind::kMalformed,
                          fmt::format("{} sent unreadable info: {}", channel_.describe(), e.what()));
  }
}

Leader::~Leader() { goodbye(); }

void Leader::send(const ctrl::Message& msg) { channel_.send(msg); }

void Leader::goodbye() noexcept {
  if (dead() || !channel_.is_open()) return;
  try {
    channel_.send(ctrl::Goodbye{}, milliseconds(1000));
  } catch (const std::exception&) {
    // the follower is gone already; nothing to release on its side
  }
  channel_.close();
}

ctrl::Result Leader::await_result(std::uint64_t sequence, milliseconds timeout) {
  ctrl::Message msg = channel_.recv(timeout);
  if (auto* e = std::get_if<ctrl::Error>(&msg)) {
    throw ctrl::CtrlError(ctrl::CtrlError::Kind::kPeerError, fmt::format("{}: {}", channel_.describe(), e->text));
  }
  auto* r = std::get_if<ctrl::Result>(&msg);
  if (r == nullptr || r->sequence != sequence) {
    throw ctrl::CtrlError(
        ctrl::CtrlError::Kind::kProtocol,
        fmt::format("{} answered out of turn ({})", channel_.describe(), ctrl::type_name(ctrl::type_of(msg))));
  }
  return std::move(*r);
}

ctrl::Result Leader::call(const std::string& what, std::vector<std::pair<std::string, std::string>> params,
                          std::uint64_t iterations, milliseconds timeout) {
  ctrl::Command c;
  c.sequence = ++sequence_;
  c.benchmark = what;
  c.params = std::move(params);
  c.iterations = iterations;
  send(c);
  return await_result(c.sequence, timeout);
}

void Leader::drop() noexcept {
  load_.reset();
  side_.reset();
  spec_.reset();
}

void Leader::setup(const TestSpec& spec) {
  drop();
  if (auto bad = check_device_limits(ctx_, spec)) throw *bad;
  const auto r = call("setup", spec.to_params(), 0, options_.timeout);
  if (r.status != ctrl::ResultStatus::kOk) throw RunError(r.error);
  // -R: the follower sends its endpoints once our rdma_cm connections are in
  // (cm_link.hpp); without, right away.
  std::vector<verbs::Endpoint> remote;
  if (!spec.rdma_cm) remote = expect_endpoints(channel_, options_.timeout);
  // The follower now waits for our endpoints: it gets them (or an empty
  // list when our side failed) either way, so a local failure fails this
  // benchmark only, not the whole conversation.
  std::unique_ptr<Side> side;
  std::unique_ptr<LoadStream> load;
  std::string local_error;
  try {
    build_local(spec, r, remote.size(), side, load);
  } catch (const std::exception& e) {
    load.reset();
    side.reset();
    local_error = e.what();
  }
  // After a failed rdma_cm connect the follower waits out its own timeout
  // for the rest before it answers.
  if (spec.rdma_cm) remote = expect_endpoints(channel_, options_.timeout * 2);
  send(ctrl::EndpointExchange{0, side ? all_endpoints(*side, load.get()) : std::vector<verbs::Endpoint>{}});
  if (side) {
    try {
      connect_all(*side, load.get(), remote);
    } catch (const std::exception& e) {
      load.reset();
      side.reset();
      local_error = e.what();
    }
  }
  const auto ack = await_result(r.sequence, options_.timeout);
  if (!local_error.empty()) throw RunError(local_error);
  if (ack.status != ctrl::ResultStatus::kOk) throw RunError(ack.error);
  side_ = std::move(side);
  load_ = std::move(load);
  spec_ = spec;
}

// Our side of `spec` (and its load) while the follower waits for our
// endpoints: Keepalives between the steps (and through a large fill) tell it
// we are at work. `r` is the follower's setup result (what it supports);
// `remote_offered` how many endpoints it offered (0 under -R).
void Leader::build_local(const TestSpec& spec, const ctrl::Result& r, std::size_t remote_offered,
                         std::unique_ptr<Side>& side, std::unique_ptr<LoadStream>& load) {
  const auto too_old = [&](const char* flag) {
    return RunError(fmt::format("the server (fabench {}) does not support {}; update it",
                                peer_.version.empty() ? "?" : peer_.version, flag));
  };
  side = std::make_unique<Side>(spec.rdma_cm ? ctx_.rdma_cm() : ctx_, spec, options_.side);
  pulse_.beat();
  side->fill_pattern(kLeaderSeed, &pulse_);
  pulse_.beat();
  if (spec.reversed && !setup_reply(r).contains("reversed")) throw too_old("--reversed");
  if (spec.rdma_cm) {
    connect_cm(*side, r);
    pulse_.beat();
  }
  if (spec.load) {
    // A follower that knows no load ignored the load_* params: it offers the spec's QPs alone.
    if (remote_offered == spec.qps) throw too_old("--load");
    load = std::make_unique<LoadStream>(ctx_, spec, options_.side, Role::kLeader);
    pulse_.beat();
  }
}

// -R: our QPs connected through rdma_cm to the port the follower named in
// its "setup" result, at the address our control connection reaches it.
nlohmann::json Leader::setup_reply(const ctrl::Result& setup_result) const {
  if (setup_result.json.empty()) return nlohmann::json::object();
  try {
    auto j = nlohmann::json::parse(setup_result.json);
    if (j.is_object()) return j;
  } catch (const nlohmann::json::exception& e) {
    throw RunError(fmt::format("{} answered setup with unreadable json: {}", channel_.describe(), e.what()));
  }
  throw RunError(fmt::format("{} answered setup with json that is not an object", channel_.describe()));
}

void Leader::connect_cm(Side& side, const ctrl::Result& setup_result) {
  std::optional<std::uint16_t> port;
  const auto j = setup_reply(setup_result);
  try {
    if (j.contains("cm_port")) port = j["cm_port"].get<std::uint16_t>();
  } catch (const nlohmann::json::exception& e) {
    throw RunError(fmt::format("{} sent an unreadable rdma_cm port: {}", channel_.describe(), e.what()));
  }
  if (!port) {
    throw RunError(fmt::format("the server (fabench {}) does not support -R (rdma_cm); update it",
                               peer_.version.empty() ? "?" : peer_.version));
  }
  const auto server = verbs::with_port(socket_address(channel_.fd(), true), *port);
  side.adopt_cm(cm_connect(side, socket_address(channel_.fd(), false), server, options_.timeout));
}

// The latency run with this end's load streaming: the load starts (and is
// flowing) before the latency loop and stops right after it; its bytes are
// counted between two reads that bracket the loop. The latency engine is
// the same call as without a load.
RunResult Leader::run_loaded(std::uint64_t iterations, harness::Samples* samples, const RunLimits& limits,
                             LoadResult& load) {
  if (auto bad = load_->start(options_.timeout); !bad.empty()) {
    load = LoadResult{false, bad};
    RunResult r;
    r.ok = false;
    r.error = fmt::format("load: {}", bad);
    return r;
  }
  const std::uint64_t b0 = load_->bytes_done();
  const std::uint64_t t0 = harness::now_ns();
  RunResult mine = run_latency(*side_, Role::kLeader, iterations, samples, limits);
  const std::uint64_t t1 = harness::now_ns();
  const std::uint64_t b1 = load_->bytes_done();
  load = load_->stop();
  load.bytes = b1 - b0;
  load.seconds = static_cast<double>(t1 - t0) / 1e9;
  if (mine.ok && !load.ok) {
    mine.ok = false;
    mine.error = fmt::format("load: {}", load.error);
  }
  return mine;
}

// "finish": the follower's result, load and counters into `out`. Even
// after a local failure the follower is asked (it names the cause when the
// fault was on its side); then its failure to answer is returned, not thrown.
std::string Leader::finish_run(Outcome& out, const harness::Counters& before) {
  try {
    const auto fin = call("finish", {}, 0, peer_.run_keepalive ? options_.timeout : options_.timeout * 3);
    out.theirs = from_result(fin);
    const nlohmann::json their_report = parse_finish(fin.json);
    if (load_) out.their_load = parse_load(their_report);
    if (options_.counters) {
      // After the follower's result: its traffic (bidirectional) is over too.
      out.my_counters = own_report(before, own_counters(ctx_));
      out.their_counters = parse_counters(their_report);
    }
    return {};
  } catch (const ctrl::CtrlError& e) {
    if (out.mine.ok) throw;
    dead_reason_ = e.what();
    return dead_reason_;
  }
}

Leader::Outcome Leader::run(const TestSpec& spec, std::uint64_t iterations, harness::Samples* samples) {
  if (dead()) throw RunError(dead_reason_);
  try {
    if (!spec_ || !(*spec_ == spec)) setup(spec);
    if (samples != nullptr) samples->clear();
    RunResult prep = prepare_run(*side_, Role::kLeader);
    if (!prep.ok) throw RunError(prep.error);
    // Counters: read before the follower hears "run" (no traffic of this run yet).
    harness::Counters before;
    std::vector<std::pair<std::string, std::string>> run_params;
    if (options_.counters) {
      before = own_counters(ctx_);
      run_params.emplace_back("counters", "1");
    }
    const auto ready = call("run", std::move(run_params), iterations, options_.timeout);
    if (ready.status != ctrl::ResultStatus::kOk) throw RunError(ready.error);
    RunLimits limits{options_.timeout};
    if (peer_.run_keepalive) limits.follower = &channel_;
    limits.keepalive = &pulse_;
    limits.clock = options_.clock;
    Outcome out;
    if (load_) {
      out.mine = run_loaded(iterations, samples, limits, out.my_load);
    } else {
      out.mine = spec.kind == Kind::kLatency ? run_latency(*side_, Role::kLeader, iterations, samples, limits)
                                             : run_bandwidth(*side_, Role::kLeader, iterations, limits);
    }
    // Bidirectional: the follower may still be writing into our buffers when
    // our own sends are done; its result comes after its last completion, so
    // our check waits for it.
    const bool peer_writes_to_us = spec.bidirectional || spec.reversed;
    if (out.mine.ok && !peer_writes_to_us) out.mine.wrong += check_payload(*side_, Role::kLeader, iterations, &pulse_);
    if (out.mine.peer_lost) {
      // The follower died or fell silent mid-run: there is no view to ask for.
      throw ctrl::CtrlError(ctrl::CtrlError::Kind::kClosed,
                            fmt::format("{} (peer {})", out.mine.error, channel_.describe()));
    }
    const std::string theirs_error = finish_run(out, before);
    if (out.mine.ok && out.theirs.ok && peer_writes_to_us) {
      out.mine.wrong += check_payload(*side_, Role::kLeader, iterations, &pulse_);
    }
    // The load's data: after the follower's result (a bidirectional load has stopped there too).
    if (out.mine.ok && out.theirs.ok && load_) out.mine.wrong += load_->check_payload();
    if (!out.mine.ok || !out.theirs.ok) {
      drop();
      std::string text = out.mine.ok ? out.theirs.error
                                     : fmt::format("{} (peer {})", out.mine.error, channel_.describe());
      if (!out.mine.ok && !out.theirs.ok && !out.theirs.error.empty()) text += "; " + out.theirs.error;
      throw RunError(theirs_error.empty() ? text : text + "; " + theirs_error);
    }
    // --reversed: the follower sent and timed the run; the reports read the
    // sender's result as "mine" and the receiver's as "theirs".
    if (spec.reversed) std::swap(out.mine, out.theirs);
    return out;
  } catch (const ctrl::CtrlError& e) {
    dead_reason_ = e.what();
    drop();
    throw;
  }
}

}  // namespace fabench::pair
