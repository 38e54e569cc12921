// What a pair adds to the Google Benchmark glue of harness/report.hpp: the
// bandwidth counters over both ends' results, a load's rate (--load), the port/hw counter deltas of
// both ends, and the units and the peer's facts in the report context.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <benchmark/benchmark.h>

#include "fabench/pair/engines.hpp"
#include "fabench/pair/options.hpp"
#include "fabench/pair/peer.hpp"

namespace fabench::pair {

// Bandwidth and message-rate counters from both ends' results. `bidir`:
// the follower's direction counts too.
void set_bandwidth_counters(benchmark::State& state, const RunResult& mine, const RunResult& theirs, bool bidir);

// A loaded latency run's counters: load_gbps, the payload Gb/s (1e9 bit/s)
// of the load during the latency loop; with a bidirectional load,
// load_tx_gbps (the leader's, over its latency loop) and load_rx_gbps (the
// follower's, over its span from "ready" to "finish") whose sum it is.
void set_load_counters(benchmark::State& state, const LoadResult& mine, const LoadResult& theirs, bool bidir);

// The units of the pair's counters and the follower's facts (host, device,
// firmware, rate, MTU, version) as Google Benchmark context, beside
// harness::add_fabric_context's facts of this end.
void add_pair_context(const PeerInfo& peer);

// Google Benchmark counter names of the deltas: "ctr:NAME" (this end, the
// client) and "peer_ctr:NAME" (the server), and the console's summary
// "ctr_err": how many selected error or congestion counters moved on either
// end (present when either end could read any counter).
inline constexpr std::string_view kCounterPrefix = "ctr:";
inline constexpr std::string_view kPeerCounterPrefix = "peer_ctr:";
inline constexpr std::string_view kCounterSummary = "ctr_err";

// Each selected non-zero delta of both ends as a counter (value in the
// kernel's unit: port_xmit_data and port_rcv_data in 4-byte words), and the
// summary.
void set_counter_deltas(benchmark::State& state, const CounterReport& mine, const CounterReport& theirs,
                        const CounterSelection& selection);

// What the counters mean, as report context ("counters"); warns (one line
// each) about -W / --counters names that none of this end's counters match.
void add_counter_context(const harness::Context& ctx, const CounterSelection& selection);

// The display reporter Google Benchmark would create (--benchmark_format),
// except that a console one leaves out the per-counter deltas ("ctr:",
// "peer_ctr:"), keeping its lines short; JSON and CSV get every counter, and
// so does --benchmark_out's file reporter (Google Benchmark's own).
[[nodiscard]] std::unique_ptr<benchmark::BenchmarkReporter> make_display_reporter();

}  // namespace fabench::pair
