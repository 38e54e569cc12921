#include "fabench/collbench/app.hpp"

#include <iostream>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "fabench/coll/cost.hpp"
#include "fabench/coll/reduce.hpp"
#include "fabench/collbench/cli.hpp"
#include "fabench/collbench/roles.hpp"
#include "fabench/harness/cli.hpp"
#include "fabench/harness/report.hpp"
#include "fabench/world/launch.hpp"

namespace fabench::collbench {

namespace {

using harness::UsageError;

// alpha from --alpha-us (else the transport's default), beta from the port's rate (RDMA) or the
// calibrated copy rate (shm: a write is a copy).
coll::CostParams cost_params(const Cli& c, bool shm, double rate_gbps, const coll::HostRates& rates) {
  coll::CostParams p;
  p.alpha_s = (c.alpha_us >= 0 ? c.alpha_us : (shm ? 1.0 : 10.0)) * 1e-6;
  // Over shared memory beta is the copy rate at each schedule's write size (SessionOptions::cost_for).
  p.beta_s_per_byte = shm ? rates.copy_s_per_byte(coll::HostRates::kSizes[1])
                          : (rate_gbps > 0 ? 8.0 / (rate_gbps * 1e9) : 1e-9);
  return p;
}

void add_cost_context(const coll::CostParams& p, const coll::HostRates& r, bool shm) {
  std::string rates;
  for (std::size_t k = 0; k < std::size(coll::HostRates::kSizes); ++k) {
    rates += fmt::format("{}{} KiB: f32 {:.3g}, bf16 {:.3g}, f16 {:.3g}, copies {:.3g}", k == 0 ? "" : "; ",
                         coll::HostRates::kSizes[k] >> 10, r.reduce_bytes_per_s[k][0] / 1e9,
                         r.reduce_bytes_per_s[k][1] / 1e9, r.reduce_bytes_per_s[k][2] / 1e9,
                         r.copy_bytes_per_s[k] / 1e9);
  }
  benchmark::AddCustomContext(
      "cost_model", fmt::format("alpha {:.3g} us; beta {}; gamma and copies calibrated (GB/s, on {}) at {}",
                                p.alpha_s * 1e6,
                                shm ? std::string("the copy rate at the write's size")
                                    : fmt::format("{:.3g} GB/s", p.beta_s_per_byte > 0 ? 1e-9 / p.beta_s_per_byte : 0),
                                coll::reduce_path_name(coll::active_reduce_path()), rates));
}

int run(Cli& c, const std::vector<CollSpec>& specs) {
  const TransportKind transport = transport_of(c);
  const bool shm = transport == TransportKind::kShm;
  auto boot = world::connect_ranks(c.ranks, c.dev.timeout());
  const bool leader = boot.rank() == 0;
  if (!leader && !c.ranks.print_all) spdlog::set_level(spdlog::level::off);
  std::string names;
  for (const auto& s : specs) names += s.name() + ";";
  world::require_same_benchmarks(boot, names);
  // The shared-memory transport opens no device.
  std::optional<harness::Context> ctx;
  if (!shm) ctx.emplace(world::context_for_rank(c.dev, boot.rank()));
  SessionOptions so;
  so.transport = transport;
  so.reduce_threads = c.reduce_threads;
  so.timeout = c.dev.timeout();
  so.spin_before_yield = world::spin_before_yield(c.ranks, boot);
  so.pipeline_chunks = c.pipeline;
  so.qp_timeout = static_cast<std::uint8_t>(c.ranks.qp_timeout);
  Session session(boot, ctx ? &*ctx : nullptr, specs, so);
  spdlog::info("rank {} of {} on {}: world up ({} peers, {} MiB arena), {} benchmark(s) to run", boot.rank(),
               boot.size(), ctx ? ctx->device().name() : std::string("shared memory"), session.peer_count(),
               session.arena_bytes() >> 20, specs.size());
  if (!leader) return follow(session);
  // Rank 0 alone, once the world is up (the others wait for its first command): a bounded
  // fraction of a second, so that a short --timeout holds on any host.
  so.rates = coll::calibrate_host();
  so.cost = cost_params(c, shm, ctx ? ctx->port().rate_gbps : 0, so.rates);
  session.set_cost_model(so.cost, so.rates);
  if (ctx) {
    harness::add_fabric_context(*ctx, "coll");
  } else {
    harness::add_host_context("coll");
  }
  benchmark::AddCustomContext("transport", shm ? "shm" : "rdma");
  world::add_world_context(boot, so.spin_before_yield, so.qp_timeout);
  // Which reduction kernels ran (coll/reduce.hpp): a bf16 all-reduce's busbw depends on it.
  benchmark::AddCustomContext("reduce_path", std::string(coll::reduce_path_name(coll::active_reduce_path())));
  if (!coll::reduce_path_note().empty()) spdlog::warn("{}", coll::reduce_path_note());
  benchmark::AddCustomContext("reduce_threads", std::to_string(so.reduce_threads));
  benchmark::AddCustomContext("compute", c.compute == "none" ? "none (reductions and copies skipped; output not checked)" : "full");
  add_cost_context(so.cost, so.rates, shm);
  benchmark::AddCustomContext("bandwidth_unit",
                              "GBps = 1e9 bytes/s; busbw = algbw x 2(n-1)/n (allreduce), (n-1)/n (others)");
  LeaderOptions lo;
  lo.registration.iterations = c.iters;
  lo.registration.min_time_s = c.duration_s;
  lo.warmup_calls = c.warmup;
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
  return harness::run_main("fabench-coll", [&] {
    const std::vector<CollSpec> specs = build_specs(c);
    return run(c, specs);
  });
}

}  // namespace fabench::collbench
