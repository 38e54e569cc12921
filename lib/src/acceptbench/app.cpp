#include "fabench/acceptbench/app.hpp"

#include <fstream>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "fabench/accept/budget.hpp"
#include "fabench/acceptbench/cli.hpp"
#include "fabench/acceptbench/session.hpp"
#include "fabench/harness/cli.hpp"
#include "fabench/world/launch.hpp"

namespace fabench::acceptbench {

namespace {

using harness::UsageError;

RunSettings settings_of(const Cli& c) {
  RunSettings s;
  s.link.lanes = c.qps;
  s.link.depth = c.depth;
  s.link.bw_bytes = bw_bytes(c);
  s.plan.seconds = c.seconds;
  s.plan.lat_iters = c.lat_iters;
  s.link.qp_timeout = static_cast<std::uint8_t>(c.ranks.qp_timeout);
  s.plan.stall = c.dev.timeout();
  s.pair_s = pair_seconds(c);
  s.pair_timeout_s = pair_timeout_seconds(c);
  s.setup_s = c.dev.timeout_s;
  s.plan.limit_s = s.pair_timeout_s - 2;  // leaves 2 s for the half to reach rank 0
  return s;
}

int plan_only(const Cli& c, const accept::Spec& spec) {
  if (c.json_out.empty()) {
    std::cout << plan_text(c, spec);
    return 0;
  }
  const std::string text = plan_json(c, spec);
  std::ofstream out(c.json_out);
  out << text;
  if (!out.flush()) throw UsageError(fmt::format("--json {}: cannot write the file", c.json_out));
  std::cout << fmt::format("{} nodes: the plan is in {}\n", c.plan_nodes, c.json_out);
  return 0;
}

int run(const Cli& c, const accept::Spec& spec) {
  RunSettings s = settings_of(c);
  auto boot = world::connect_ranks(c.ranks, c.dev.timeout());
  s.plan.spin_before_yield = world::spin_before_yield(c.ranks, boot);
  if (boot.size() < 2) {
    throw UsageError(fmt::format("fabench-accept needs at least 2 ranks, but {} was launched (mpirun -np N, srun -n N "
                                 "or fabench-launch -n N)",
                                 boot.size()));
  }
  const bool leader = boot.rank() == 0;
  if (!leader && !c.ranks.print_all) spdlog::set_level(spdlog::level::warn);
  world::require_same_benchmarks(
      boot, fmt::format("accept s={} D={} q={} t={} u={} lat={} timeout={}", s.link.bw_bytes, c.seconds, c.qps, c.depth,
                        c.ranks.qp_timeout, c.lat_iters, c.dev.timeout_s));
  const harness::Context ctx(world::context_for_rank(c.dev, boot.rank()));
  spdlog::debug("rank {} of {} on {} port {}", boot.rank(), boot.size(), ctx.device().name(), ctx.port().port_num);
  if (!leader) return follow(boot, ctx, s);
  const LeadOutputs out{c.json_out, c.junit_out, c.pairs_file, c.schedule};
  return lead(boot, ctx, spec, s, out,
              [&c, &boot](const std::vector<std::string>& names) { return build_schedule(c, boot.size(), names); });
}

}  // namespace

int accept_main(int argc, char** argv) {
  spdlog::set_default_logger(spdlog::stderr_color_mt("fabench-accept"));
  spdlog::set_pattern("%n: %^%l%$: %v");
  CLI::App app("fabench-accept: every pair of N nodes, judged against the link rate and the fleet, culprit named",
               "fabench-accept");
  Cli c;
  add_options(app, c);
  app.footer(help_footer());
  if (auto rc = harness::parse_command_line(app, argc, argv, "fabench-accept", "")) return *rc;
  if (c.dev.verbose) spdlog::set_level(spdlog::level::debug);
  return harness::run_main("fabench-accept", [&] {
    const accept::Spec spec = build_spec(c);
    (void)bw_bytes(c);
    if (c.plan) {
      // The judging thresholds judge measurements a plan does not make: refused, not ignored.
      for (const char* f : {"--port-gbps", "--min-bw-fraction", "--min-bidir-fraction", "--max-p99-us", "--outlier-k",
                            "--outlier-min-fraction", "--zero-counters", "--node-bad-fraction"}) {
        if (app.count(f) > 0) {
          throw UsageError(fmt::format("{} does not apply to --plan: it judges measurements, and a plan makes none", f));
        }
      }
      return plan_only(c, spec);
    }
    if (c.plan_nodes != 0) throw UsageError("--nodes goes with --plan (a run takes its node count from the launcher)");
    if (c.plan_rounds != "8") throw UsageError("--rounds goes with --plan (a run measures every round)");
    return run(c, spec);
  });
}

}  // namespace fabench::acceptbench
