#include "fabench/pair/peer.hpp"

#include <algorithm>
#include <stdexcept>
#include <variant>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "fabench/ctrl/wire.hpp"
#include "fabench/harness/loop.hpp"
#include "fabench/pair/cm_link.hpp"
#include "fabench/verbs/port.hpp"

namespace fabench::pair {

namespace {

using std::chrono::milliseconds;

ctrl::Result result(std::uint64_t seq, ctrl::ResultStatus status = ctrl::ResultStatus::kOk, std::string error = {}) {
  ctrl::Result r;
  r.sequence = seq;
  r.status = status;
  r.error = std::move(error);
  return r;
}

std::vector<double> to_values(const RunResult& r) {
  return {r.ok ? 1.0 : 0.0,
          r.seconds,
          static_cast<double>(r.messages),
          static_cast<double>(r.bytes),
          static_cast<double>(r.received),
          static_cast<double>(r.wrong)};
}

RunResult from_values(const ctrl::Result& res) {
  RunResult r;
  if (res.values.size() != 6) {
    r.ok = false;
    r.error = res.error.empty() ? "follower sent a malformed result" : res.error;
    return r;
  }
  r.ok = res.values[0] != 0.0 && res.status == ctrl::ResultStatus::kOk;
  r.error = res.error;
  r.seconds = res.values[1];
  r.messages = static_cast<std::uint64_t>(res.values[2]);
  r.bytes = static_cast<std::uint64_t>(res.values[3]);
  r.received = static_cast<std::uint64_t>(res.values[4]);
  r.wrong = static_cast<std::uint64_t>(res.values[5]);
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

// This end's port and hw counters (outside any timed loop).
harness::Counters own_counters(const harness::Context& ctx) {
  return harness::read_port_counters(ctx.device().name(), ctx.port().port_num);
}

bool wants_counters(const ctrl::Command& cmd) {
  return std::any_of(cmd.params.begin(), cmd.params.end(),
                     [](const auto& kv) { return kv.first == "counters" && kv.second == "1"; });
}

// The follower's finish json: its counter changes (when asked: `before`
// given) and its load's part of the run (when the spec has a load).
std::string finish_json(const harness::Counters* before, const harness::Counters& after, const LoadStream* load,
                        const LoadResult& lr) {
  nlohmann::json j = nlohmann::json::object();
  if (before != nullptr) {
    nlohmann::json deltas = nlohmann::json::object();
    for (const auto& [name, delta] : harness::counter_deltas(*before, after)) deltas[name] = delta;
    j["counters"] = deltas;
    j["counters_read"] = after.size();
  }
  if (load != nullptr) {
    j["load"] = {{"streams", load->streams()}, {"bytes", lr.bytes}, {"seconds", lr.seconds}, {"error", lr.error}};
  }
  return j.dump();
}

// The follower's finish json, parsed once for its parts below; null when it
// sent none or sent something unreadable (logged).
nlohmann::json parse_finish(const std::string& json) {
  if (json.empty()) return nullptr;
  try {
    return nlohmann::json::parse(json);
  } catch (const nlohmann::json::exception& e) {
    spdlog::warn("the peer's finish report is unreadable: {}", e.what());
    return nullptr;
  }
}

// The follower's load from its finish json (zeros when it sent none).
LoadResult parse_load(const nlohmann::json& j) {
  LoadResult r;
  if (!j.is_object() || !j.contains("load") || !j["load"].is_object()) return r;
  try {
    const auto& l = j["load"];
    r.bytes = l.value("bytes", std::uint64_t{0});
    r.seconds = l.value("seconds", 0.0);
    r.error = l.value("error", std::string{});
    r.ok = r.error.empty();
  } catch (const nlohmann::json::exception& e) {
    spdlog::warn("the peer's load report is unreadable: {}", e.what());
    r = LoadResult{};
  }
  return r;
}

// The follower's counters from its finish json; not read when it sent none.
CounterReport parse_counters(const nlohmann::json& j) {
  CounterReport r;
  if (!j.is_object() || !j.contains("counters") || !j["counters"].is_object()) return r;
  try {
    for (const auto& [name, delta] : j["counters"].items()) r.deltas[name] = delta.get<std::int64_t>();
    r.available = j.value("counters_read", std::size_t{0});
    r.read = true;
  } catch (const nlohmann::json::exception& e) {
    spdlog::warn("the peer's counters are unreadable: {}", e.what());
    r = CounterReport{};
  }
  return r;
}

CounterReport own_report(const harness::Counters& before, const harness::Counters& after) {
  CounterReport r;
  r.read = true;
  r.available = after.size();
  r.deltas = harness::counter_deltas(before, after);
  return r;
}

// The peer's EndpointExchange, the next message on `ch` in a setup.
std::vector<verbs::Endpoint> expect_endpoints(ctrl::Channel& ch, milliseconds timeout) {
  ctrl::Message msg = ch.recv(timeout);
  auto* eps = std::get_if<ctrl::EndpointExchange>(&msg);
  if (eps == nullptr) {
    throw ctrl::CtrlError(ctrl::CtrlError::Kind::kProtocol,
                          fmt::format("{} sent {} where its endpoints were expected", ch.describe(),
                                      ctrl::type_name(ctrl::type_of(msg))));
  }
  return std::move(eps->endpoints);
}

}  // namespace

ctrl::Hello pair_hello() {
  ctrl::Hello h;
  h.build_version = std::string(ctrl::build_version());
  h.host_name = ctrl::local_host_name();
  return h;
}

// ---------------------------------------------------------------- follower --

namespace {

// What a follower holds for the spec last set up: the latency or bandwidth
// Side and, for a latency spec with a load, the load's resources.
struct Setup {
  std::unique_ptr<Side> side;
  std::unique_ptr<LoadStream> load;
};

// The endpoints of a setup: the spec's QPs, then the load's (when it has one).
std::vector<verbs::Endpoint> all_endpoints(const Side& side, const LoadStream* load) {
  auto eps = side.endpoints();
  if (load != nullptr) {
    const auto more = load->endpoints();
    eps.insert(eps.end(), more.begin(), more.end());
  }
  return eps;
}

// Connects the spec's QPs to the first of `remote`, the load's to the rest.
void connect_all(Side& side, LoadStream* load, const std::vector<verbs::Endpoint>& remote) {
  const std::size_t own = side.qps().size();
  const std::size_t want = own + (load != nullptr ? load->side().qps().size() : 0);
  if (remote.size() != want) {
    throw std::runtime_error(fmt::format("peer offered {} queue pairs, expected {}", remote.size(), want));
  }
  side.connect({remote.begin(), remote.begin() + static_cast<std::ptrdiff_t>(own)});
  if (load != nullptr) load->connect({remote.begin() + static_cast<std::ptrdiff_t>(own), remote.end()});
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
  if (auto bad = check_device_limits(ctx, spec); !bad.empty()) {
    ch.send(result(seq, ctrl::ResultStatus::kUnsupported, fmt::format("server {}: {}", ctx.device().name(), bad)));
    return {};
  }
  if (total_buffer_bytes(spec) > o.max_mem_bytes) {
    ch.send(result(seq, ctrl::ResultStatus::kUnsupported,
                   fmt::format("server refuses {} MiB of buffers for {}: above its --max-mem of {} MiB",
                               total_buffer_bytes(spec) >> 20, spec.name(), o.max_mem_bytes >> 20)));
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
  // From "ready" to the result this side says nothing of its own: a
  // heartbeat tells the leader it is alive (checking a large buffer may take
  // a while), so that the leader may name a stopped follower within its timeout.
  std::mutex send_mutex;
  auto heartbeat = std::make_unique<ctrl::Heartbeat>(std::vector<ctrl::Channel*>{&ch}, send_mutex);
  RunLimits limits{o.timeout};
  limits.leader = &ch;
  RunResult mine = side.spec().kind == Kind::kLatency
                       ? run_latency(side, Role::kFollower, cmd.iterations, nullptr, limits)
                       : run_bandwidth(side, Role::kFollower, cmd.iterations, limits);
  if (mine.peer_lost) {
    throw ctrl::CtrlError(ctrl::CtrlError::Kind::kClosed, mine.error);
  }
  const ctrl::Command fin = expect_command(ch.recv(o.timeout), ch);
  if (fin.benchmark != "finish") {
    throw ctrl::CtrlError(ctrl::CtrlError::Kind::kProtocol,
                          fmt::format("{} sent '{}' during a run", ch.describe(), fin.benchmark));
  }
  LoadResult load_result;
  if (load != nullptr) {
    const std::uint64_t load_b1 = load->bytes_done();
    const std::uint64_t load_t1 = harness::now_ns();
    load_result = load->stop();
    load_result.bytes = load_b1 - load_b0;
    load_result.seconds = static_cast<double>(load_t1 - load_t0) / 1e9;
    if (mine.ok && !load_result.ok) {
      mine.ok = false;
      mine.error = fmt::format("load: {}", load_result.error);
    }
  }
  // "finish" comes after the leader's last completion: both ends' traffic is over.
  const harness::Counters after = counters ? own_counters(ctx) : harness::Counters{};
  if (mine.ok) mine.wrong += check_payload(side, Role::kFollower, cmd.iterations);
  if (mine.ok && load != nullptr) mine.wrong += load->check_payload();
  auto r = result(fin.sequence, mine.ok ? ctrl::ResultStatus::kOk : ctrl::ResultStatus::kFailed,
                  mine.ok ? std::string{} : fmt::format("server: {}", mine.error));
  r.values = to_values(mine);
  if (counters || load != nullptr) r.json = finish_json(counters ? &before : nullptr, after, load, load_result);
  heartbeat.reset();  // its last frame is out before the result goes
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

// ------------------------------------------------------------------ leader --

Leader::Leader(ctrl::Channel channel, const harness::Context& ctx, const PeerOptions& options)
    : channel_(std::move(channel)), ctx_(ctx), options_(options) {
  (void)channel_.exchange_hello(pair_hello(), options_.timeout, ctrl::Credentials{options_.token, false});
  heartbeat_ = std::make_unique<ctrl::Heartbeat>(std::vector<ctrl::Channel*>{&channel_}, send_mutex_);
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

void Leader::send(const ctrl::Message& msg) {
  const std::lock_guard lock(send_mutex_);
  channel_.send(msg);
}

void Leader::goodbye() noexcept {
  heartbeat_.reset();
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
  if (auto bad = check_device_limits(ctx_, spec); !bad.empty()) throw std::invalid_argument(bad);
  const auto r = call("setup", spec.to_params(), 0, options_.timeout);
  if (r.status != ctrl::ResultStatus::kOk) throw std::runtime_error(r.error);
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
    side = std::make_unique<Side>(spec.rdma_cm ? ctx_.rdma_cm() : ctx_, spec, options_.side);
    side->fill_pattern(kLeaderSeed);
    if (spec.reversed && !setup_reply(r).contains("reversed")) {
      throw std::runtime_error(fmt::format("the server (fabench {}) does not support --reversed; update it",
                                           peer_.version.empty() ? "?" : peer_.version));
    }
    if (spec.rdma_cm) connect_cm(*side, r);
    if (spec.load) {
      // A follower that knows no load ignored the load_* params: it offers the spec's QPs alone.
      if (remote.size() == spec.qps) {
        throw std::runtime_error(fmt::format("the server (fabench {}) does not support --load; update it",
                                             peer_.version.empty() ? "?" : peer_.version));
      }
      load = std::make_unique<LoadStream>(ctx_, spec, options_.side, Role::kLeader);
    }
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
  if (!local_error.empty()) throw std::runtime_error(local_error);
  if (ack.status != ctrl::ResultStatus::kOk) throw std::runtime_error(ack.error);
  side_ = std::move(side);
  load_ = std::move(load);
  spec_ = spec;
}

// -R: our QPs connected through rdma_cm to the port the follower named in
// its "setup" result, at the address our control connection reaches it.
nlohmann::json Leader::setup_reply(const ctrl::Result& setup_result) const {
  if (setup_result.json.empty()) return nlohmann::json::object();
  try {
    auto j = nlohmann::json::parse(setup_result.json);
    if (j.is_object()) return j;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("{} answered setup with unreadable json: {}", channel_.describe(), e.what()));
  }
  throw std::runtime_error(fmt::format("{} answered setup with json that is not an object", channel_.describe()));
}

void Leader::connect_cm(Side& side, const ctrl::Result& setup_result) {
  std::optional<std::uint16_t> port;
  const auto j = setup_reply(setup_result);
  try {
    if (j.contains("cm_port")) port = j["cm_port"].get<std::uint16_t>();
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("{} sent an unreadable rdma_cm port: {}", channel_.describe(), e.what()));
  }
  if (!port) {
    throw std::runtime_error(fmt::format("the server (fabench {}) does not support -R (rdma_cm); update it",
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

Leader::Outcome Leader::run(const TestSpec& spec, std::uint64_t iterations, harness::Samples* samples) {
  if (dead()) throw std::runtime_error(dead_reason_);
  try {
    if (!spec_ || !(*spec_ == spec)) setup(spec);
    if (samples != nullptr) samples->clear();
    RunResult prep = prepare_run(*side_, Role::kLeader);
    if (!prep.ok) throw std::runtime_error(prep.error);
    // Counters: read before the follower hears "run" (no traffic of this run yet).
    harness::Counters before;
    std::vector<std::pair<std::string, std::string>> run_params;
    if (options_.counters) {
      before = own_counters(ctx_);
      run_params.emplace_back("counters", "1");
    }
    const auto ready = call("run", std::move(run_params), iterations, options_.timeout);
    if (ready.status != ctrl::ResultStatus::kOk) throw std::runtime_error(ready.error);
    RunLimits limits{options_.timeout};
    if (peer_.run_keepalive) limits.follower = &channel_;
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
    if (out.mine.ok && !peer_writes_to_us) out.mine.wrong += check_payload(*side_, Role::kLeader, iterations);
    if (out.mine.peer_lost) {
      // The follower died or fell silent mid-run: there is no view to ask for.
      throw ctrl::CtrlError(ctrl::CtrlError::Kind::kClosed,
                            fmt::format("{} (peer {})", out.mine.error, channel_.describe()));
    }
    // Even after a local failure ask for the follower's view: it names the
    // cause when the fault was on its side.
    std::string theirs_error;
    try {
      const auto fin = call("finish", {}, 0, peer_.run_keepalive ? options_.timeout : options_.timeout * 3);
      out.theirs = from_values(fin);
      const nlohmann::json their_report = parse_finish(fin.json);
      if (load_) out.their_load = parse_load(their_report);
      if (options_.counters) {
        // After the follower's result: its traffic (bidirectional) is over too.
        out.my_counters = own_report(before, own_counters(ctx_));
        out.their_counters = parse_counters(their_report);
      }
    } catch (const ctrl::CtrlError& e) {
      if (out.mine.ok) throw;
      theirs_error = e.what();
      dead_reason_ = theirs_error;
    }
    if (out.mine.ok && out.theirs.ok && peer_writes_to_us) {
      out.mine.wrong += check_payload(*side_, Role::kLeader, iterations);
    }
    // The load's data: after the follower's result (a bidirectional load has stopped there too).
    if (out.mine.ok && out.theirs.ok && load_) out.mine.wrong += load_->check_payload();
    if (!out.mine.ok || !out.theirs.ok) {
      drop();
      std::string text = out.mine.ok ? out.theirs.error
                                     : fmt::format("{} (peer {})", out.mine.error, channel_.describe());
      if (!out.mine.ok && !out.theirs.ok && !out.theirs.error.empty()) text += "; " + out.theirs.error;
      if (!theirs_error.empty()) text += "; " + theirs_error;
      throw std::runtime_error(text);
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
