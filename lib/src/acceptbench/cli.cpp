#include "fabench/acceptbench/cli.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "fabench/accept/budget.hpp"
#include "fabench/accept/error.hpp"

namespace fabench::acceptbench {

using harness::UsageError;

void add_options(CLI::App& app, Cli& c) {
  harness::add_device_flags(app, c.dev);
  world::add_rank_flags(app, c.ranks);
  app.add_option("--schedule", c.schedule, "round-robin (every pair once) or bisection (default round-robin)")
      ->type_name("NAME");
  app.add_option("--pairs", c.pairs_file, "Measure the pairs of FILE instead (\"A B\" per line; see below)")
      ->type_name("FILE");
  app.add_option("-s,--size", c.size, "Bytes per bandwidth write, K/M/G (default 1M)")->type_name("SIZE");
  app.add_option("-D,--duration", c.seconds, "Seconds per bandwidth phase: A->B, B->A, both (default 1)")
      ->check(harness::positive_seconds("-D"));
  app.add_option("-q,--qps", c.qps, "QPs per pair, writes dealt round-robin (default 1; try 1, 2, 4, 8)")
      ->check(harness::whole_number("--qps", 1, 64));
  app.add_option("-t,--tx-depth", c.depth, "Writes in flight per QP (default 16)")
      ->check(harness::whole_number("--tx-depth", 1, 1024));
  app.add_option("--lat-iters", c.lat_iters, "2-byte write round trips per pair (default 1000)")
      ->check(harness::whole_number("--lat-iters", 1, 10'000'000));
  app.add_option("--spec", c.spec_file, "Spec file (JSON, see below); the flags below override its fields")
      ->type_name("FILE");
  app.add_option("--port-gbps", c.port_gbps, "Port rate to judge against, Gb/s (default: each node's active rate)");
  app.add_option("--min-bw-fraction", c.min_bw_fraction, "Each direction >= this x port rate (default 0.9; 0: off)");
  app.add_option("--min-bidir-fraction", c.min_bidir_fraction, "Both at once >= this x 2 x port rate (default 0.9)");
  app.add_option("--max-p99-us", c.max_p99_us, "Latency p99 at most this, us (default 0: not checked)");
  app.add_option("--outlier-k", c.outlier_k, "Fleet rule: worse than median by k x MAD is bad (default 5; 0: off)");
  app.add_option("--outlier-min-fraction", c.outlier_min_fraction,
                 "Fleet rule: never bad within this fraction of the median (default 0.05)");
  app.add_option("--retests", c.retests, "Measure a bad pair again up to this many times (default 1)");
  app.add_option("--zero-counters", c.zero_counters,
                 "Counters that must not move, a list (default symbol_error,link_downed,...; \"\" for none)");
  app.add_option("--node-bad-fraction", c.node_bad_fraction,
                 "Blame a node bad in more than this share of its pairs (default 0.5)");
  app.add_option("--json", c.json_out, "Write the whole run (with --plan: the schedule) as JSON to FILE")
      ->type_name("FILE");
  app.add_option("--junit", c.junit_out, "Write JUnit XML (one testcase per pair) to FILE")->type_name("FILE");
  app.add_flag("--plan", c.plan, "Print the schedule and the time bound for --nodes N; no RDMA");
  app.add_option("--nodes", c.plan_nodes, "With --plan: the node count")
      ->check(harness::whole_number("--nodes", 2, 8192));
  app.add_option("--rounds", c.plan_rounds, "With --plan: rounds to list, a number or all (default 8)")
      ->type_name("N|all");
}

accept::Spec build_spec(const Cli& c) {
  try {
    accept::Spec s = c.spec_file.empty() ? accept::Spec{} : accept::load_spec(c.spec_file);
    if (c.port_gbps) s.port_gbps = *c.port_gbps;
    if (c.min_bw_fraction) s.min_bw_fraction = *c.min_bw_fraction;
    if (c.min_bidir_fraction) s.min_bidir_fraction = *c.min_bidir_fraction;
    if (c.max_p99_us) s.max_p99_us = *c.max_p99_us;
    if (c.outlier_k) s.outlier_k = *c.outlier_k;
    if (c.outlier_min_fraction) s.outlier_min_fraction = *c.outlier_min_fraction;
    if (c.retests) s.retests = *c.retests;
    if (c.node_bad_fraction) s.node_bad_fraction = *c.node_bad_fraction;
    if (c.zero_counters) {
      s.zero_counters.clear();
      if (!c.zero_counters->empty()) s.zero_counters = harness::split_list(*c.zero_counters);
    }
    accept::validate(s, c.spec_file.empty() ? "spec" : "spec (--spec " + c.spec_file + " and flags)");
    return s;
  } catch (const accept::AcceptError& e) {
    throw UsageError(e.what());
  }
}

std::uint64_t bw_bytes(const Cli& c) {
  std::uint64_t v = 0;
  try {
    v = harness::parse_bytes(c.size);
  } catch (const std::invalid_argument& e) {
    throw UsageError(fmt::format("-s: {}", e.what()));
  }
  if (v == 0 || v > (1ULL << 30)) throw UsageError(fmt::format("-s must be from 1 to 1G bytes (got {})", c.size));
  return v;
}

accept::Schedule build_schedule(const Cli& c, std::uint32_t n, const std::vector<std::string>& names) {
  try {
    if (!c.pairs_file.empty()) return accept::pack_rounds(n, accept::load_pairs(c.pairs_file, names));
    if (c.schedule == "round-robin") return accept::round_robin(n);
    if (c.schedule == "bisection") return accept::bisection(n);
  } catch (const accept::AcceptError& e) {
    throw UsageError(e.what());
  }
  throw UsageError(fmt::format("--schedule takes round-robin or bisection (got {})", c.schedule));
}

namespace {

accept::Schedule plan_schedule(const Cli& c) {
  if (c.plan_nodes == 0) throw UsageError("--plan needs --nodes N");
  if (!c.junit_out.empty()) throw UsageError("--junit describes a run's pairs; --plan measures none (--json FILE)");
  return build_schedule(c, c.plan_nodes, std::vector<std::string>(c.plan_nodes));
}

accept::TimeSettings plan_times(const Cli& c, const accept::Spec& spec, const accept::Schedule& s) {
  return accept::TimeSettings{s.rounds.size(), pair_seconds(c), pair_timeout_seconds(c), 2 * c.dev.timeout_s,
                              spec.retests};
}

std::string schedule_name(const Cli& c) { return c.pairs_file.empty() ? c.schedule : "--pairs " + c.pairs_file; }

// --rounds: a count from 1, or all.
std::size_t rounds_to_list(const Cli& c, std::size_t rounds) {
  if (c.plan_rounds == "all") return rounds;
  const auto n = harness::parse_integer<std::uint32_t>(c.plan_rounds);
  if (!n || *n == 0) throw UsageError(fmt::format("--rounds {}: expected a number of rounds (1 or more) or all",
                                                  c.plan_rounds));
  return std::min<std::size_t>(rounds, *n);
}

}  // namespace

std::string plan_text(const Cli& c, const accept::Spec& spec) {
  const accept::Schedule s = plan_schedule(c);
  const std::size_t shown = rounds_to_list(c, s.rounds.size());
  std::string out = fmt::format("{} nodes: {} pairs in {} rounds ({})\n", c.plan_nodes, s.pair_count(),
                                s.rounds.size(), schedule_name(c));
  out += fmt::format("planned: {:.1f} s per pair, {:.1f} s for the schedule; {}\n", pair_seconds(c),
                     pair_seconds(c) * static_cast<double>(s.rounds.size()),
                     accept::describe_upper_bound(plan_times(c, spec, s)));
  const bool all = c.plan_rounds == "all";
  for (std::size_t r = 0; r < shown; ++r) {
    std::string line;
    const auto& pairs = s.rounds[r];
    for (std::size_t i = 0; i < pairs.size() && (all || i < 12); ++i) line += fmt::format(" {}-{}", pairs[i].a, pairs[i].b);
    if (!all && pairs.size() > 12) line += fmt::format(" ... ({} pairs)", pairs.size());
    out += fmt::format("round {}:{}\n", r + 1, line);
  }
  if (shown < s.rounds.size()) {
    out += fmt::format("... {} more rounds (--rounds all lists them, --json FILE writes them)\n",
                       s.rounds.size() - shown);
  }
  return out;
}

std::string plan_json(const Cli& c, const accept::Spec& spec) {
  const accept::Schedule s = plan_schedule(c);
  const accept::TimeSettings ts = plan_times(c, spec, s);
  nlohmann::json rounds = nlohmann::json::array();
  for (const auto& round : s.rounds) {
    nlohmann::json pairs = nlohmann::json::array();
    for (const auto& p : round) pairs.push_back({p.a, p.b});
    rounds.push_back(std::move(pairs));
  }
  nlohmann::json j;
  j["plan"] = {{"nodes", c.plan_nodes},
               {"schedule", schedule_name(c)},
               {"pairs", s.pair_count()},
               {"pair_seconds", pair_seconds(c)},
               {"pair_timeout_seconds", pair_timeout_seconds(c)},
               {"schedule_seconds", pair_seconds(c) * static_cast<double>(s.rounds.size())},
               {"upper_bound", accept::describe_upper_bound(ts)},
               {"rounds", std::move(rounds)}};
  return j.dump(2) + "\n";
}

double pair_seconds(const Cli& c) {
  // Three bandwidth phases plus their drains, the latency test (budgeted at 1 ms per round trip,
  // far above any fabric's, so the bound holds on a slow one) and five step messages.
  return 3 * (c.seconds + 0.1) + (16.0 + c.lat_iters) * 1e-3 + 0.5;
}

double pair_timeout_seconds(const Cli& c) {
  // A pair whose partner stops waits at most one stall (--timeout) beyond its plan; 2 s for the
  // report to reach rank 0.
  return pair_seconds(c) + c.dev.timeout_s + 2;
}

std::string help_footer() {
  return R"(
Launch one process per node and device, like nccl-tests: mpirun -np N, srun -n N or
fabench-launch -n N (rank and size from the launcher's environment). -d takes a list
(mlx5_0,mlx5_1): rank r uses entry r mod its length. Rank 0 drives the run and writes the reports.

Schedules (which pairs run in which round; the pairs of a round run at the same time):
  round-robin  every pair once, by the circle method: N-1 rounds of N/2 pairs (N even), N rounds
               of (N-1)/2 pairs with one node idle (N odd)
  bisection    lower half of the nodes against the upper half, all at once, ceil(N/2) rounds
  --pairs F    the pairs of file F, one "A B" per line (node index or node name; # comments)

Per pair (A is the lower rank): write bandwidth A->B, B->A and both at once at -s bytes over
--qps QPs for -D seconds each, 2-byte write latency (p50, p99, max), and the port counter deltas
of both ends (/sys/class/infiniband/DEV/ports/N/counters and hw_counters).

Spec (--spec FILE, JSON; every field optional; flags override):
  {"port_gbps": 0, "min_bw_fraction": 0.9, "min_bidir_fraction": 0.9, "max_p99_us": 0,
   "outlier_k": 5, "outlier_min_fraction": 0.05, "retests": 1,
   "zero_counters": ["symbol_error", "link_downed", ...], "node_bad_fraction": 0.5}
A pair fails a rule when a direction is below min_bw_fraction x the port rate (port_gbps, or
the slower end's active rate), the bidirectional sum below min_bidir_fraction x 2 x the rate,
p99 above max_p99_us, a zero counter moved, or a measurement is an outlier of the fleet (worse
than the median by more than max(k x MAD, min_fraction x median); needs 8 pairs). A bad pair is
measured again up to `retests` times: good on retest reads "flaky", bad to the end "fail".
Culprits: a node bad in more than node_bad_fraction of its pairs, else the link (path) of
each remaining bad pair. A pair whose peer dies or stops reads "timeout"; the run goes on.

Outputs: a summary on stdout (bad pairs, culprits, verdict), --json FILE (every pair and
measurement with units, counters, verdicts; `fabench-report FILE -o report.html` draws the
matrices), --junit FILE (one testcase per pair). The time bound of the whole run is printed
before it starts. --plan --nodes N prints the schedule and the bound without RDMA (--rounds all:
every round; --json FILE: the whole schedule as JSON).

Exit status: 0 accepted, 1 not accepted (or a run error), 2 bad usage.
)";
}

}  // namespace fabench::acceptbench
