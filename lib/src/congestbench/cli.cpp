// fabench-congest's flags and the benchmarks they ask for.
#include <limits>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "fabench/congestbench/app.hpp"

namespace fabench::congestbench {

using harness::UsageError;

void add_options(CLI::App& app, Cli& c) {
  harness::add_device_flags(app, c.dev);
  world::add_rank_flags(app, c.ranks);
  app.add_option("--congestors", c.congestors,
                 "Fraction of the ranks that congest, drawn by a seeded shuffle (default 0.8, GPCNeT's)");
  app.add_option("--congestor-ranks", c.congestor_ranks, "The congestors by rank instead, e.g. 1-3,5")
      ->type_name("LIST");
  app.add_option("--pattern", c.patterns,
                 "Congestor patterns: incast, put-incast, get-broadcast, all-to-all, a list or all (default all)")
      ->type_name("LIST");
  app.add_option("--ratio", c.ratio, "With incast patterns: N senders into the target, N:1 (default: every congestor)")
      ->type_name("N:1");
  app.add_option("--target", c.target, "The incast target, a congestor (default: the lowest congestor rank)");
  app.add_option("--congestor-size", c.congestor_size, "Bytes per congestor operation (default 4K, GPCNeT's)")
      ->type_name("SIZE");
  app.add_option("--test", c.tests,
                 "Victim tests: latency (8 B ring), bandwidth (128 KiB x 8 ring), allreduce (8 B, every victim), "
                 "a list (default all three)")
      ->type_name("LIST");
  app.add_option("--rounds", c.rounds, "Isolated and loaded phases per pattern, interleaved (default 3)")
      ->check(harness::whole_number("--rounds", 1, 1000));
  app.add_option("-n,--iters", c.iters,
                 "Victim iterations per phase (default 2000 latency, 200 bandwidth, 1000 allreduce)")
      ->check(harness::whole_number("-n", 1, std::numeric_limits<std::int32_t>::max()));
  app.add_option("--ramp-ms", c.ramp_ms, "Loaded phases: victims start this long after the congestors (default 50)")
      ->check(harness::whole_number("--ramp-ms", 0, 60'000));
  app.add_option("--slack", c.slack,
                 "Congestors stop when the victims are done, or after this many times the isolated phase "
                 "(+1 s; at least --timeout, at most twice it; default 20)")
      ->check(harness::number_at_least("--slack", 1));
  app.add_option("--seed", c.seed, "Seed of the roles' shuffle and the rings (default 1)");
}

std::vector<CongestBench> build_benches(const Cli& c) {
  if (!(c.congestors > 0 && c.congestors < 1)) {
    throw UsageError(fmt::format("--congestors {}: a fraction of the ranks, between 0 and 1", c.congestors));
  }
  std::vector<congest::Pattern> patterns;
  try {
    patterns = congest::parse_patterns(c.patterns);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("--pattern: {}", e.what()));
  }
  const std::uint32_t senders = c.ratio.empty() ? 0 : congest::parse_ratio(c.ratio);
  if (senders > 0) {
    for (const auto p : patterns) {
      if (p != congest::Pattern::kIncast && p != congest::Pattern::kPutIncast) {
        throw UsageError(fmt::format("--ratio goes with incast and put-incast, not {}", congest::pattern_name(p)));
      }
    }
  }
  const auto tests = harness::parse_list<VictimTest>(c.tests, "--test", [](const std::string& s) {
    if (s == "latency") return VictimTest::kLatency;
    if (s == "bandwidth") return VictimTest::kBandwidth;
    if (s == "allreduce") return VictimTest::kAllReduce;
    throw UsageError(fmt::format("unknown victim test \"{}\" (latency, bandwidth, allreduce)", s));
  });
  (void)congestor_bytes(c);
  std::vector<CongestBench> out;
  for (const auto t : tests) {
    for (const auto p : patterns) out.push_back({t, p, senders});
  }
  return out;
}

congest::Roles roles_of(const Cli& c, std::uint32_t ranks) {
  if (!c.congestor_ranks.empty()) {
    const auto named = congest::parse_rank_list(c.congestor_ranks, ranks);
    return congest::named_roles(ranks, named);
  }
  return congest::choose_roles(ranks, c.congestors, c.seed);
}

std::uint64_t congestor_bytes(const Cli& c) {
  const std::uint64_t b = harness::parse_flag_bytes("--congestor-size", c.congestor_size);
  if (b == 0 || b > (64U << 20)) throw UsageError(fmt::format("--congestor-size {}: from 1 to 64M", c.congestor_size));
  return b;
}

std::uint64_t victim_iterations(const Cli& c, VictimTest t) {
  if (c.iters > 0) return c.iters;
  switch (t) {
    case VictimTest::kLatency: return 2000;
    case VictimTest::kBandwidth: return 200;
    case VictimTest::kAllReduce: return 1000;
  }
  return 1;
}

}  // namespace fabench::congestbench
