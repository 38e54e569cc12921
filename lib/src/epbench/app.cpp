#include "fabench/epbench/app.hpp"

#include <iostream>

#include <CLI/CLI.hpp>
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "fabench/epbench/cli.hpp"
#include "fabench/epbench/roles.hpp"
#include "fabench/harness/report.hpp"
#include "fabench/kv/plan.hpp"

namespace fabench::epbench {

namespace {

void add_context(const EpBench& b, std::uint32_t ranks) {
  const auto add = [](const std::string& k, const std::string& v) { benchmark::AddCustomContext(k, v); };
  const ep::MoeShape& m = b.config.shape;
  add("ep_model", m.name);
  add("ep_hidden", std::to_string(m.hidden));
  add("ep_experts", fmt::format("{} ({} per rank at most)", m.experts, ep::Placement(m.experts, ranks).max_count()));
  add("ep_top_k", std::to_string(m.top_k));
  add("ep_groups", m.group_limited() ? fmt::format("{} of {}", m.topk_group, m.n_group) : "none");
  add("ep_routing", b.routing_file.empty() ? fmt::format("seed {}, skew {}", b.seed, ep::skew_name(b.skew))
                                           : "replay " + b.routing_file);
  add("ep_units",
      "dispatch_us/combine_us: p50 over calls of the slowest rank; GBps = 1e9 bytes/s of fabric bytes per rank; "
      "recv_tokens: token copies a rank's experts get");
}

int run(const Cli& c, std::vector<EpBench> benches) {
  auto boot = world::connect_ranks(c.ranks, c.dev.timeout());
  const bool leader = boot.rank() == 0;
  if (!leader && !c.ranks.print_all) spdlog::set_level(spdlog::level::off);
  std::string names;
  for (const auto& b : benches) names += b.name() + ";";
  world::require_same_benchmarks(boot, names);
  const harness::Context ctx(world::context_for_rank(c.dev, boot.rank()));
  SessionOptions so;
  so.timeout = c.dev.timeout();
  so.spin_before_yield = world::spin_before_yield(c.ranks, boot);
  so.qp_timeout = static_cast<std::uint8_t>(c.ranks.qp_timeout);
  Session session(boot, ctx, std::move(benches), so);
  spdlog::info("rank {} of {} on {}: world up ({} peers, {} MiB arena), {} benchmark(s)", boot.rank(), boot.size(),
               ctx.device().name(), session.world().peers().size(), session.world().arena().length() >> 20,
               session.benches().size());
  if (!leader) return follow(session);
  harness::add_fabric_context(ctx, "ep");
  world::add_world_context(boot, so.spin_before_yield, so.qp_timeout);
  add_context(session.benches().front(), boot.size());
  LeaderOptions lo;
  lo.registration.iterations = c.iters;
  lo.registration.min_time_s = c.duration_s;
  lo.link_bytes_per_s = c.link.empty() ? ctx.port().rate_gbps * 1e9 / 8 : kv::parse_link_rate(c.link);
  lo.wr_cost_s = c.wr_cost_ns * 1e-9;
  lo.round_s = c.round_us * 1e-6;
  return lead(session, lo);
}

}  // namespace

int ep_main(int argc, char** argv) {
  spdlog::set_default_logger(spdlog::stderr_color_mt("fabench-ep"));
  spdlog::set_pattern("%n: %^%l%$: %v");
  CLI::App app("fabench-ep: MoE dispatch and combine (expert parallelism) over RDMA, shaped by real models", "fabench-ep");
  Cli c;
  add_options(app, c);
  app.footer(
      "Experts are placed E/N per rank in contiguous blocks; every rank draws its tokens' top-k\n"
      "experts from (--seed, rank), so every rank knows every count. Launch N ranks with mpirun -np N,\n"
      "srun -n N or fabench-launch -n N. -d takes a list (rxe0,rxe1): rank r uses entry r mod its length.\n"
      "--plan needs no RDMA: bytes, copies, WRs and predicted times per EP size (--ep).\n"
      "Presets: " + ep_preset_list());
  if (auto rc = harness::parse_command_line(
          app, argc, argv, "fabench-ep",
          "\nGoogle Benchmark flags pass through on rank 0 (--benchmark_format=json, --benchmark_out=FILE,\n"
          "--benchmark_filter=REGEX, --benchmark_repetitions=N, ...).\n")) {
    return *rc;
  }
  if (c.dev.verbose) spdlog::set_level(spdlog::level::debug);
  return harness::run_main("fabench-ep", [&] {
    if (c.plan) {
      std::cout << render_plan(c);
      return 0;
    }
    return run(c, build_benches(c));
  });
}

}  // namespace fabench::epbench
