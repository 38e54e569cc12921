// Internal to lib/src/pair: what both ends of the pair protocol share
// (peer.cpp): the run result's reading, the follower's finish json and its
// reading, counter reads, and the endpoint exchange. follower.cpp serves a
// leader; leader.cpp is the Leader. Not installed; not part of the library's
// interface.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fabench/ctrl/channel.hpp"
#include "fabench/harness/context.hpp"
#include "fabench/harness/counters.hpp"
#include "fabench/pair/engines.hpp"
#include "fabench/pair/load.hpp"
#include "fabench/pair/peer.hpp"
#include "fabench/pair/side.hpp"
#include "fabench/verbs/endpoint.hpp"

namespace fabench::pair::peer_util {

// The follower's RunResult from its Result (RunResult::from_record; a
// record that does not read is a failed run, its error naming the field).
RunResult from_result(const ctrl::Result& res);

// This end's port and hw counters (outside any timed loop).
harness::Counters own_counters(const harness::Context& ctx);
CounterReport own_report(const harness::Counters& before, const harness::Counters& after);

// The follower's finish json: its counter changes (when asked: `before`
// given) and its load's part of the run (when the spec has a load).
std::string finish_json(const harness::Counters* before, const harness::Counters& after, const LoadStream* load,
                        const LoadResult& lr);
// The leader's reading of it: parsed once (null when the follower sent none
// or sent something unreadable, logged), then its load (zeros when none) and
// its counters (not read when none).
nlohmann::json parse_finish(const std::string& json);
LoadResult parse_load(const nlohmann::json& j);
CounterReport parse_counters(const nlohmann::json& j);

// The peer's EndpointExchange, the next message on `ch` in a setup.
std::vector<verbs::Endpoint> expect_endpoints(ctrl::Channel& ch, std::chrono::milliseconds timeout);
// The endpoints of a setup: the spec's QPs, then the load's (when it has one).
std::vector<verbs::Endpoint> all_endpoints(const Side& side, const LoadStream* load);
// Connects the spec's QPs to the first of `remote`, the load's to the rest.
void connect_all(Side& side, LoadStream* load, const std::vector<verbs::Endpoint>& remote);

}  // namespace fabench::pair::peer_util
