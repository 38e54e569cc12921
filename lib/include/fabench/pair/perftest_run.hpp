// What the perftest flags change in a client's run, outside the timed
// loops: the reporter that prints perftest's table (perftest_report.hpp)
// built from the leader's facts, the rounds of --run_infinitely, the
// warm-up run's size and the --force-link check.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fabench/base/error.hpp"
#include "fabench/harness/context.hpp"
#include "fabench/harness/samples.hpp"
#include "fabench/pair/options.hpp"
#include "fabench/pair/peer.hpp"
#include "fabench/pair/perftest_report.hpp"

namespace fabench::pair {

// nullptr when no perftest output, JSON or limit is asked for (Google
// Benchmark's own reporters then run exactly as without these flags).
[[nodiscard]] std::unique_ptr<PerftestReporter> make_perftest_reporter(const Options& o, const harness::Context& ctx,
                                                                       const Leader& leader,
                                                                       const std::vector<TestSpec>& specs,
                                                                       const harness::Samples& samples);

// Runs the registered benchmarks once, or with --run_infinitely again and
// again until SIGINT or SIGTERM (a second signal ends the process at once),
// reporting to `reporter` when there is one, else to `display`.
// Returns the failed checks' lines (limits, JSON) of every round.
[[nodiscard]] std::vector<std::string> run_perftest_rounds(PerftestReporter* reporter,
                                                           benchmark::BenchmarkReporter* display, bool run_infinitely);

// --perform_warm_up: the iterations of the unmeasured run before a
// benchmark's first measured one.
[[nodiscard]] std::uint64_t warm_up_iterations(std::uint64_t measured) noexcept;

// None, or the error when --force-link names another link layer than the port's.
[[nodiscard]] std::optional<UserError> check_force_link(const PerftestFlags& f, const harness::Context& ctx);

// -D seconds for --run_infinitely's rounds when -D is not given (perftest's default).
inline constexpr double kInfiniteRoundSeconds = 5;

}  // namespace fabench::pair
