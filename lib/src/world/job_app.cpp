// The N-rank skeleton (job_app.hpp): main, launch, set-up and the two roles, once.
#include "fabench/world/job_app.hpp"

#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace fabench::world {

namespace {

constexpr std::string_view kBenchmarkFlagsHelp =
    "\nGoogle Benchmark flags pass through on rank 0 (--benchmark_format=json, --benchmark_out=FILE,\n"
    "--benchmark_filter=REGEX, --benchmark_repetitions=N, ...).\n";

// Launch and set-up on this rank, then its role.
int run_ranks(AppJob& job) {
  auto boot = connect_ranks(job.ranks(), job.device().timeout());
  job.check_size(boot);
  const bool leader = boot.rank() == 0;
  if (!leader && !job.ranks().print_all) {
    spdlog::set_level(job.followers_warn() ? spdlog::level::warn : spdlog::level::off);
  }
  require_same_benchmarks(boot, job.agreement());
  std::optional<harness::Context> ctx;
  if (job.uses_device()) ctx.emplace(context_for_rank(job.device(), boot.rank()));
  const Rank rank{boot, ctx ? &*ctx : nullptr, job.device().timeout(), spin_before_yield(job.ranks(), boot),
                  static_cast<std::uint8_t>(job.ranks().qp_timeout)};
  const std::unique_ptr<Job> session = job.set_up(rank);
  if (!leader) return follow(boot, *session, job.driver_options(rank));
  Leader driver(boot, *session, job.driver_options(rank));
  return job.lead(rank, driver);
}

}  // namespace

std::string Rank::where(const std::string& none) const { return ctx ? ctx->device().name() : none; }

DriverOptions AppJob::driver_options(const Rank& rank) const {
  return DriverOptions{text().prog, rank.timeout, rank.spin_before_yield};
}

int job_main(int argc, char** argv, AppJob& job) {
  const AppJob::Text t = job.text();
  spdlog::set_default_logger(spdlog::stderr_color_mt(t.prog));
  spdlog::set_pattern("%n: %^%l%$: %v");
  CLI::App app(t.description, t.prog);
  job.add_options(app);
  app.footer(t.footer);
  if (auto rc = harness::parse_command_line(app, argc, argv, t.prog, t.benchmark_flags ? kBenchmarkFlagsHelp : "")) {
    return *rc;
  }
  if (job.device().verbose) spdlog::set_level(spdlog::level::debug);
  return harness::run_main(t.prog, [&] {
    if (auto rc = job.before_launch(app)) return *rc;
    return run_ranks(job);
  });
}

void log_world_up(const Rank& rank, const std::string& role, const std::string& where, const std::string& what,
                  const std::string& count) {
  spdlog::info("rank {} of {}{} on {}: world up ({}), {}", rank.boot.rank(), rank.boot.size(), role, where, what,
               count);
}

std::string BenchmarkJob::agreement() const {
  std::string out;
  for (const auto& name : names()) out += name + ";";
  return out;
}

int BenchmarkJob::lead(const Rank& rank, Leader& driver) {
  begin(rank);
  const auto all = names();
  for (std::size_t i = 0; i < all.size(); ++i) {
    harness::register_fabric_benchmark(
        all[i],
        [this, i, &driver](benchmark::State& st) {
          if (driver.broken()) return fail(st, "not run: " + driver.broken_reason());
          bench(st, i, driver);
        },
        registration());
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  driver.finish();
  end();
  if (failures_ == 0) return 0;
  std::cerr << fmt::format("{}: {} benchmark run(s) failed{}\n", text().prog, failures_,
                           driver.broken() ? ": " + driver.broken_reason() : std::string());
  return 1;
}

bool BenchmarkJob::batches(benchmark::State& state, Leader& driver, std::size_t index, const Params& params,
                           const Absorb& absorb) {
  const auto n = static_cast<std::uint64_t>(state.max_iterations);
  while (state.KeepRunningBatch(static_cast<benchmark::IterationCount>(n))) {
    const Outcome out = driver.run(index, n, params);
    std::string error = out.error;
    const std::optional<double> seconds = out.ok ? absorb(out, error) : std::nullopt;
    if (!seconds) {
      fail(state, error);
      return false;
    }
    state.SetIterationTime(*seconds);
  }
  return true;
}

void BenchmarkJob::fail(benchmark::State& state, const std::string& error) {
  ++failures_;
  state.SkipWithError(error.c_str());
}

}  // namespace fabench::world
