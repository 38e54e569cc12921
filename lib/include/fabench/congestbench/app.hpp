// fabench-congest as a job of the N-rank skeleton (world/job_app.hpp): its flags and benchmarks
// (cli.cpp), its Session on every rank (session.hpp), and rank 0's rounds of isolated and
// loaded phases, the CIF and its attribution to a port (leader.cpp). docs/design/congest.md.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fabench/congest/cif.hpp"
#include "fabench/congestbench/session.hpp"
#include "fabench/harness/cli.hpp"
#include "fabench/world/job_app.hpp"
#include "fabench/world/launch.hpp"

namespace fabench::congestbench {

struct Cli {
  harness::DeviceFlags dev;
  world::RankFlags ranks;
  double congestors = 0.8;
  std::string congestor_ranks;  // --congestor-ranks LIST instead of the shuffle
  std::string patterns = "all";
  std::string ratio;  // --ratio N:1 (incast)
  std::optional<std::uint32_t> target;
  std::string congestor_size = "4K";
  std::string tests = "latency,bandwidth,allreduce";
  std::uint32_t rounds = 3;
  std::uint64_t iters = 0;  // -n: victim iterations per phase (0: 2000 latency, 200 bandwidth, 1000 allreduce)
  std::uint32_t ramp_ms = 50;
  double slack = 20;  // congestors' bound: this many times the isolated phase + 1 s, within [--timeout, 2 x --timeout]
  std::uint64_t seed = 1;
};

void add_options(CLI::App& app, Cli& c);
// The benchmarks in run order (test x pattern); UsageError (one line) for bad values.
[[nodiscard]] std::vector<CongestBench> build_benches(const Cli& c);
// The roles from the flags for `ranks` ranks (UsageError when they do not fit).
[[nodiscard]] congest::Roles roles_of(const Cli& c, std::uint32_t ranks);
// --congestor-size in bytes (1 .. 64 MiB; UsageError otherwise).
[[nodiscard]] std::uint64_t congestor_bytes(const Cli& c);
// -n, else the test's default.
[[nodiscard]] std::uint64_t victim_iterations(const Cli& c, VictimTest t);

// One benchmark's phases on rank 0: every victim's samples alone and loaded, per rank counters.
struct Phases {
  std::vector<std::vector<double>> isolated, loaded;  // by path: rank x --rounds + round (victims only)
  std::vector<congest::CounterDeltas> counters;       // by rank, loaded phases summed
  std::uint64_t congestor_ops = 0, congestor_bytes = 0;
  double congestor_seconds = 0;  // summed over congestors and phases
  std::uint32_t uncovered = 0;   // loaded victim phases that outlasted the congestors' bound
  std::uint64_t wrong = 0;       // all-reduce output elements not the exact sum, every phase
  double isolated_s = 0;         // the last isolated phase's longest victim
  double seconds = 0;            // every phase's longest rank, summed
};

class CongestJob final : public world::CliJob<Cli> {
 public:
  [[nodiscard]] Text text() const override;
  [[nodiscard]] std::optional<int> before_launch(CLI::App& app) override;
  void check_size(const ctrl::Bootstrap& boot) const override;
  [[nodiscard]] std::unique_ptr<world::Job> set_up(const world::Rank& rank) override;

 private:
  void begin(const world::Rank& rank) override;
  [[nodiscard]] std::vector<std::string> names() const override;
  [[nodiscard]] harness::Registration registration() const override { return {1, 0}; }
  void bench(benchmark::State& state, std::size_t index, world::Leader& driver) override;
  bool phase(world::Leader& driver, std::size_t index, bool loaded, std::uint32_t round, Phases& ph,
             std::string& error);
  void report(benchmark::State& state, std::size_t index, const Phases& ph);
  [[nodiscard]] congest::Attribution attribution(const CongestBench& b, congest::Metric metric, const Phases& ph,
                                                 std::vector<std::string>& per_victim) const;
  [[nodiscard]] std::string port_of(std::uint32_t rank) const;

  std::vector<CongestBench> benches_;
  congest::Roles roles_;
  std::uint32_t target_ = 0;
  std::uint32_t ranks_ = 0;
  double window_s_ = 0;   // the last loaded window, so that a later round never shortens it
  std::uint64_t seq_ = 0;  // phases run so far (the stop flag's value)
};

[[nodiscard]] int congest_main(int argc, char** argv);

}  // namespace fabench::congestbench
