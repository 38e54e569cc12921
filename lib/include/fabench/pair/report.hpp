// What a pair adds to the Google Benchmark glue of harness/report.hpp: the
// bandwidth counters over both ends' results, and the units and the peer's
// facts in the report context.
#pragma once

#include <benchmark/benchmark.h>

#include "fabench/pair/engines.hpp"
#include "fabench/pair/peer.hpp"

namespace fabench::pair {

// Bandwidth and message-rate counters from both ends' results. `bidir`:
// the follower's direction counts too.
void set_bandwidth_counters(benchmark::State& state, const RunResult& mine, const RunResult& theirs, bool bidir);

// The units of the pair's counters and the follower's facts (host, device,
// firmware, rate, MTU, version) as Google Benchmark context, beside
// harness::add_fabric_context's facts of this end.
void add_pair_context(const PeerInfo& peer);

}  // namespace fabench::pair
