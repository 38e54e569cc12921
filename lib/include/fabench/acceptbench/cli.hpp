// fabench-accept's command line: the flags, the spec they make (over a --spec file) and the
// settings of every pair. Separate from main() so that tests can drive it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "fabench/accept/schedule.hpp"
#include "fabench/accept/spec.hpp"
#include "fabench/harness/cli.hpp"
#include "fabench/world/launch.hpp"

namespace fabench::acceptbench {

struct Cli {
  harness::DeviceFlags dev;
  world::RankFlags ranks;
  std::string schedule = "round-robin";
  std::string pairs_file;
  std::string size = "1M";
  double seconds = 1.0;
  std::uint32_t qps = 1;
  std::uint32_t depth = 16;
  std::uint32_t lat_iters = 1000;
  std::string spec_file;
  std::optional<double> port_gbps, min_bw_fraction, min_bidir_fraction, max_p99_us, outlier_k, outlier_min_fraction,
      node_bad_fraction;
  std::optional<std::uint32_t> retests;
  std::optional<std::string> zero_counters;
  std::string json_out;
  std::string junit_out;
  bool plan = false;
  std::uint32_t plan_nodes = 0;
  std::string plan_rounds = "8";  // --rounds: how many rounds --plan lists, or "all"
};

void add_options(CLI::App& app, Cli& c);
// The --spec file (if any) with the flags over it, validated. UsageError, one line.
[[nodiscard]] accept::Spec build_spec(const Cli& c);
// -s as bytes: UsageError unless 1..1 GiB.
[[nodiscard]] std::uint64_t bw_bytes(const Cli& c);
// The schedule for n nodes (names for --pairs). UsageError, one line.
[[nodiscard]] accept::Schedule build_schedule(const Cli& c, std::uint32_t n, const std::vector<std::string>& names);
// The printed bound's inputs for a schedule of `rounds` rounds.
[[nodiscard]] double pair_seconds(const Cli& c);          // the planned length of one pair
[[nodiscard]] double pair_timeout_seconds(const Cli& c);  // its hard limit
// --plan: the schedule's summary and its first --rounds rounds as text, or with
// --json FILE the whole schedule as JSON (written by the caller). UsageError, one line.
[[nodiscard]] std::string plan_text(const Cli& c, const accept::Spec& spec);
[[nodiscard]] std::string plan_json(const Cli& c, const accept::Spec& spec);
// What --help prints after the flags: schedules, the spec, the outputs, the exit status.
[[nodiscard]] std::string help_footer();

}  // namespace fabench::acceptbench
