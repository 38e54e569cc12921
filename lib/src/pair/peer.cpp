#include "fabench/pair/peer.hpp"

#include <algorithm>
#include <stdexcept>
#include <variant>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "fabench/ctrl/wire.hpp"
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

std::string counters_json(const harness::Counters& before, const harness::Counters& after) {
  nlohmann::json deltas = nlohmann::json::object();
  for (const auto& [name, delta] : harness::counter_deltas(before, after)) deltas[name] = delta;
  return nlohmann::json{{"counters", deltas}, {"counters_read", after.size()}}.dump();
}

// The follower's counters from its finish Result; not read when it sent none.
CounterReport parse_counters(const std::string& json) {
  CounterReport r;
  if (json.empty()) return r;
  try {
    const auto j = nlohmann::json::parse(json);
    if (!j.contains("counters") || !j["counters"].is_object()) return r;
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

// "setup": the previous Side goes, then the new one is built and connected,
// or the leader hears why not (a refusal keeps the conversation going).
std::unique_ptr<Side> follow_setup(ctrl::Channel& ch, const harness::Context& ctx, const PeerOptions& o,
                                   const ctrl::Command& cmd) {
  const auto seq = cmd.sequence;
  TestSpec spec;
  try {
    spec = TestSpec::from_params(cmd.params);
  } catch (const std::exception& e) {
    ch.send(result(seq, ctrl::ResultStatus::kFailed, e.what()));
    return nullptr;
  }
  if (auto bad = check_device_limits(ctx, spec); !bad.empty()) {
    ch.send(result(seq, ctrl::ResultStatus::kUnsupported, fmt::format("server {}: {}", ctx.device().name(), bad)));
    return nullptr;
  }
  if (spec.buffer_bytes() > o.max_mem_bytes) {
    ch.send(result(seq, ctrl::ResultStatus::kUnsupported,
                   fmt::format("server refuses {} MiB of buffers for {}: above its --max-mem of {} MiB",
                               spec.buffer_bytes() >> 20, spec.name(), o.max_mem_bytes >> 20)));
    return nullptr;
  }
  std::unique_ptr<Side> side;
  try {
    side = std::make_unique<Side>(ctx, spec, o.side);
    side->fill_pattern(kFollowerSeed);
  } catch (const std::exception& e) {
    ch.send(result(seq, ctrl::ResultStatus::kFailed, fmt::format("server: {}", e.what())));
    return nullptr;
  }
  ch.send(result(seq));
  ch.send(ctrl::EndpointExchange{0, side->endpoints()});
  const auto remote = expect_endpoints(ch, o.timeout);
  try {
    side->connect(remote);
    ch.send(result(seq));
  } catch (const std::exception& e) {
    ch.send(result(seq, ctrl::ResultStatus::kFailed, fmt::format("server: {}", e.what())));
    return nullptr;
  }
  return side;
}

// "run" then "finish": false when the Side is spent (its QPs in ERROR).
bool follow_run(ctrl::Channel& ch, const harness::Context& ctx, Side& side, const PeerOptions& o,
                const ctrl::Command& cmd) {
  const RunResult prep = prepare_run(side, Role::kFollower);
  if (!prep.ok) {
    ch.send(result(cmd.sequence, ctrl::ResultStatus::kFailed, fmt::format("server: {}", prep.error)));
    return false;
  }
  const bool counters = wants_counters(cmd);
  harness::Counters before;
  if (counters) before = own_counters(ctx);  // before "ready": no traffic of this run yet
  ch.send(result(cmd.sequence));             // ready
  RunLimits limits{o.timeout};
  limits.leader = &ch;
  RunResult mine = side.spec().kind == Kind::kLatency
                       ? run_latency(side, Role::kFollower, cmd.iterations, nullptr, limits)
                       : run_bandwidth(side, Role::kFollower, cmd.iterations, limits);
  if (mine.leader_lost) {
    throw ctrl::CtrlError(ctrl::CtrlError::Kind::kClosed, mine.error);
  }
  const ctrl::Command fin = expect_command(ch.recv(o.timeout), ch);
  if (fin.benchmark != "finish") {
    throw ctrl::CtrlError(ctrl::CtrlError::Kind::kProtocol,
                          fmt::format("{} sent '{}' during a run", ch.describe(), fin.benchmark));
  }
  // "finish" comes after the leader's last completion: both ends' traffic is over.
  const harness::Counters after = counters ? own_counters(ctx) : harness::Counters{};
  if (mine.ok) mine.wrong += check_payload(side, Role::kFollower);
  auto r = result(fin.sequence, mine.ok ? ctrl::ResultStatus::kOk : ctrl::ResultStatus::kFailed,
                  mine.ok ? std::string{} : fmt::format("server: {}", mine.error));
  r.values = to_values(mine);
  if (counters) r.json = counters_json(before, after);
  ch.send(r);
  return mine.ok;
}

}  // namespace

void follow(ctrl::Channel& ch, const harness::Context& ctx, const PeerOptions& o) {
  std::unique_ptr<Side> side;
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
      side.reset();  // the previous configuration's QPs and memory go first
      side = follow_setup(ch, ctx, o, cmd);
    } else if (cmd.benchmark == "run") {
      if (!side) {
        ch.send(result(cmd.sequence, ctrl::ResultStatus::kFailed, "run before a successful setup"));
      } else if (!follow_run(ch, ctx, *side, o, cmd)) {
        side.reset();  // its QPs are in the error state now
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
  keepalive_ = std::jthread([this](const std::stop_token& stop) { keep_alive(stop); });
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
  } catch (const nlohmann::json::exception& e) {
    throw ctrl::CtrlError(ctrl::CtrlError::Kind::kMalformed,
                          fmt::format("{} sent unreadable info: {}", channel_.describe(), e.what()));
  }
}

Leader::~Leader() { goodbye(); }

void Leader::keep_alive(const std::stop_token& stop) {
  // Every second: well inside any follower timeout worth having (>= 2 s).
  constexpr auto kInterval = std::chrono::seconds(1);
  std::unique_lock lock(keepalive_mutex_);
  while (!keepalive_cv_.wait_for(lock, stop, kInterval, [] { return false; })) {
    if (stop.stop_requested()) return;
    try {
      const std::lock_guard send_lock(send_mutex_);
      channel_.send(ctrl::Keepalive{}, milliseconds(1000));
    } catch (const std::exception& e) {
      // The main thread meets the same failure at its next exchange and reports it.
      spdlog::debug("keepalive to {}: {}", channel_.describe(), e.what());
      return;
    }
  }
}

void Leader::stop_keepalive() noexcept {
  if (keepalive_.joinable()) {
    keepalive_.request_stop();
    keepalive_.join();
  }
}

void Leader::send(const ctrl::Message& msg) {
  const std::lock_guard lock(send_mutex_);
  channel_.send(msg);
}

void Leader::goodbye() noexcept {
  stop_keepalive();
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

void Leader::setup(const TestSpec& spec) {
  side_.reset();
  spec_.reset();
  if (auto bad = check_device_limits(ctx_, spec); !bad.empty()) throw std::invalid_argument(bad);
  const auto r = call("setup", spec.to_params(), 0, options_.timeout);
  if (r.status != ctrl::ResultStatus::kOk) throw std::runtime_error(r.error);
  const auto remote = expect_endpoints(channel_, options_.timeout);
  // The follower now waits for our endpoints: it gets them (or an empty
  // list when our side failed) either way, so a local failure fails this
  // benchmark only, not the whole conversation.
  std::unique_ptr<Side> side;
  std::string local_error;
  try {
    side = std::make_unique<Side>(ctx_, spec, options_.side);
    side->fill_pattern(kLeaderSeed);
  } catch (const std::exception& e) {
    side.reset();
    local_error = e.what();
  }
  send(ctrl::EndpointExchange{0, side ? side->endpoints() : std::vector<verbs::Endpoint>{}});
  if (side) {
    try {
      side->connect(remote);
    } catch (const std::exception& e) {
      side.reset();
      local_error = e.what();
    }
  }
  const auto ack = await_result(r.sequence, options_.timeout);
  if (!local_error.empty()) throw std::runtime_error(local_error);
  if (ack.status != ctrl::ResultStatus::kOk) throw std::runtime_error(ack.error);
  side_ = std::move(side);
  spec_ = spec;
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
    const RunLimits limits{options_.timeout};
    Outcome out;
    out.mine = spec.kind == Kind::kLatency ? run_latency(*side_, Role::kLeader, iterations, samples, limits)
                                           : run_bandwidth(*side_, Role::kLeader, iterations, limits);
    // Bidirectional: the follower may still be writing into our buffers when
    // our own sends are done; its result comes after its last completion, so
    // our check waits for it.
    if (out.mine.ok && !spec.bidirectional) out.mine.wrong += check_payload(*side_, Role::kLeader);
    // Even after a local failure ask for the follower's view: it names the
    // cause when the fault was on its side.
    std::string theirs_error;
    try {
      const auto fin = call("finish", {}, 0, options_.timeout * 3);
      out.theirs = from_values(fin);
      if (options_.counters) {
        // After the follower's result: its traffic (bidirectional) is over too.
        out.my_counters = own_report(before, own_counters(ctx_));
        out.their_counters = parse_counters(fin.json);
      }
    } catch (const ctrl::CtrlError& e) {
      if (out.mine.ok) throw;
      theirs_error = e.what();
      dead_reason_ = theirs_error;
    }
    if (out.mine.ok && out.theirs.ok && spec.bidirectional) out.mine.wrong += check_payload(*side_, Role::kLeader);
    if (!out.mine.ok || !out.theirs.ok) {
      side_.reset();
      spec_.reset();
      std::string text = out.mine.ok ? out.theirs.error
                                     : fmt::format("{} (peer {})", out.mine.error, channel_.describe());
      if (!out.mine.ok && !out.theirs.ok && !out.theirs.error.empty()) text += "; " + out.theirs.error;
      if (!theirs_error.empty()) text += "; " + theirs_error;
      throw std::runtime_error(text);
    }
    return out;
  } catch (const ctrl::CtrlError& e) {
    dead_reason_ = e.what();
    side_.reset();
    spec_.reset();
    throw;
  }
}

}  // namespace fabench::pair
