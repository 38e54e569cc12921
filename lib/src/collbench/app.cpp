#include "fabench/collbench/app.hpp"

#include <iostream>

#include <CLI/CLI.hpp>
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "fabench/coll/reduce.hpp"
#include "fabench/collbench/cli.hpp"
#include "fabench/collbench/roles.hpp"
#include "fabench/harness/cli.hpp"
#include "fabench/harness/report.hpp"
#include "fabench/world/launch.hpp"

namespace fabench::collbench {

namespace {

using harness::UsageError;

int run(Cli& c, const std::vector<CollSpec>& specs) {
  auto boot = world::connect_ranks(c.ranks, c.dev.timeout());
  const bool leader = boot.rank() == 0;
  if (!leader && !c.ranks.print_all) spdlog::set_level(spdlog::level::off);
  std::string names;
  for (const auto& s : specs) names += s.name() + ";";
  world::require_same_benchmarks(boot, names);
  const harness::Context ctx(world::context_for_rank(c.dev, boot.rank()));
  SessionOptions so;
  so.timeout = c.dev.timeout();
  so.spin_before_yield = world::spin_before_yield(c.ranks, boot);
  so.pipeline_chunks = c.pipeline;
  so.qp_timeout = static_cast<std::uint8_t>(c.ranks.qp_timeout);
  so.cost.alpha_s = c.alpha_us * 1e-6;
  so.cost.beta_s_per_byte = ctx.port().rate_gbps > 0 ? 8.0 / (ctx.port().rate_gbps * 1e9) : 1e-9;
  so.cost.gamma_s_per_byte = 0.25e-9;
  Session session(boot, ctx, specs, so);
  spdlog::info("rank {} of {} on {}: world up ({} peers, {} MiB arena), {} benchmark(s) to run", boot.rank(),
               boot.size(), ctx.device().name(), session.world().peers().size(), session.world().arena().length() >> 20,
               specs.size());
  if (!leader) return follow(session);
  harness::add_fabric_context(ctx, "coll");
  // Which reduction kernels ran (coll/reduce.hpp): a bf16 all-reduce's busbw depends on it.
  benchmark::AddCustomContext("reduce_path", std::string(coll::reduce_path_name(coll::active_reduce_path())));
  if (!coll::reduce_path_note().empty()) spdlog::warn("{}", coll::reduce_path_note());
  world::add_world_context(boot, so.spin_before_yield, so.qp_timeout);
  benchmark::AddCustomContext("bandwidth_unit",
                              "GBps = 1e9 bytes/s; busbw = algbw x 2(n-1)/n (allreduce), (n-1)/n (others)");
  LeaderOptions lo;
  lo.registration.iterations = c.iters;
  lo.registration.min_time_s = c.duration_s;
  return lead(session, lo);
}

}  // namespace

int coll_main(int argc, char** argv) {
  spdlog::set_default_logger(spdlog::stderr_color_mt("fabench-coll"));
  spdlog::set_pattern("%n: %^%l%$: %v");
  CLI::App app("fabench-coll: collectives across N ranks over RDMA writes, reported through Google Benchmark",
               "fabench-coll");
  Cli c;
  add_options(app, c);
  app.footer(
      "Launch like nccl-tests: mpirun -np N fabench-coll ..., srun -n N fabench-coll ..., or\n"
      "fabench-launch -n N fabench-coll ... (rank and size come from the launcher's environment).\n"
      "-d takes a list (rxe0,rxe1): rank r uses entry r mod its length.");
  if (auto rc = harness::parse_command_line(
          app, argc, argv, "fabench-coll",
          "\nGoogle Benchmark flags pass through on rank 0 (--benchmark_format=json, --benchmark_out=FILE,\n"
          "--benchmark_filter=REGEX, --benchmark_repetitions=N, ...).\n")) {
    return *rc;
  }
  if (c.dev.verbose) spdlog::set_level(spdlog::level::debug);
  std::vector<CollSpec> specs;
  try {
    specs = build_specs(c);
  } catch (const std::exception& e) {
    std::cerr << "fabench-coll: error: " << e.what() << "\n";
    return 2;
  }
  try {
    return run(c, specs);
  } catch (const UsageError& e) {
    std::cerr << "fabench-coll: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "fabench-coll: error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace fabench::collbench
