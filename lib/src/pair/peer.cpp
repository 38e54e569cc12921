// The pair protocol's shared parts (peer_util.hpp) and the hello of both ends.
// follower.cpp serves a leader; leader.cpp is the Leader.
#include "fabench/pair/peer.hpp"
#include "fabench/base/error.hpp"

#include <stdexcept>
#include <variant>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "fabench/ctrl/wire.hpp"
#include "peer_util.hpp"

namespace fabench::pair {

namespace peer_util {

RunResult from_result(const ctrl::Result& res) {
  RunResult r;
  try {
    r = RunResult::from_record(res.record);
  } catch (const ctrl::RecordError& e) {
    r = RunResult{};
    r.ok = false;
    r.error = res.error.empty() ? fmt::format("follower sent a malformed result: {}", e.what()) : res.error;
    return r;
  }
  r.ok = r.ok && res.status == ctrl::ResultStatus::kOk;
  r.error = res.error;
  return r;
}

}  // namespace peer_util

namespace peer_util {

// This end's port and hw counters (outside any timed loop).
harness::Counters own_counters(const harness::Context& ctx) {
  return harness::read_port_counters(ctx.device().name(), ctx.port().port_num);
}

CounterReport own_report(const harness::Counters& before, const harness::Counters& after) {
  CounterReport r;
  r.read = true;
  r.available = after.size();
  r.deltas = harness::counter_deltas(before, after);
  return r;
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

// The peer's EndpointExchange, the next message on `ch` in a setup.
std::vector<verbs::Endpoint> expect_endpoints(ctrl::Channel& ch, std::chrono::milliseconds timeout) {
  ctrl::Message msg = ch.recv(timeout);
  auto* eps = std::get_if<ctrl::EndpointExchange>(&msg);
  if (eps == nullptr) {
    throw ctrl::CtrlError(ctrl::CtrlError::Kind::kProtocol,
                          fmt::format("{} sent {} where its endpoints were expected", ch.describe(),
                                      ctrl::type_name(ctrl::type_of(msg))));
  }
  return std::move(eps->endpoints);
}

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
    throw RunError(fmt::format("peer offered {} queue pairs, expected {}", remote.size(), want));
  }
  side.connect({remote.begin(), remote.begin() + static_cast<std::ptrdiff_t>(own)});
  if (load != nullptr) load->connect({remote.begin() + static_cast<std::ptrdiff_t>(own), remote.end()});
}

}  // namespace peer_util

ctrl::Hello pair_hello() {
  ctrl::Hello h;
  h.build_version = std::string(ctrl::build_version());
  h.host_name = ctrl::local_host_name();
  return h;
}

}  // namespace fabench::pair
