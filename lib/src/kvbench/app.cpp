#include "fabench/kvbench/app.hpp"

#include <fstream>
#include <iostream>
#include <limits>

#include <CLI/CLI.hpp>
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "fabench/harness/cli.hpp"
#include "fabench/harness/report.hpp"
#include "fabench/kv/error.hpp"
#include "fabench/kv/plan_report.hpp"
#include "fabench/kvbench/cli.hpp"
#include "fabench/kvbench/roles.hpp"
#include "fabench/world/launch.hpp"

namespace fabench::kvbench {

namespace {

using harness::UsageError;

void add_context(const std::vector<KvBench>& benches) {
  const kv::KvSpec& s = benches.front().spec;
  const auto sz = kv::sizes(s);
  auto add = [](const std::string& k, const std::string& v) { benchmark::AddCustomContext(k, v); };
  add("kv_model", s.model.name);
  add("kv_dtype", std::string(kv::dtype_name(s.model.dtype)));
  add("kv_layers", std::to_string(s.model.layers));
  add("kv_heads", s.model.mla ? "MLA" : std::to_string(s.model.kv_heads));
  add("kv_head_dim", std::to_string(s.model.head_elems()));
  add("kv_bytes_per_token", std::to_string(sz.bytes_per_token));
  add("kv_page_tokens", std::to_string(s.page_tokens));
  add("kv_page_bytes_prefill", std::to_string(sz.prefill_page_bytes));
  add("kv_page_bytes_decode", std::to_string(sz.decode_page_bytes));
  add("kv_tp", fmt::format("prefill {} -> decode {}", s.prefill_tp, s.decode_tp));
  add("bandwidth_unit", "GBps = 1e9 bytes/s; p50/p99/max_us: per-request transfer time");
}

int run(const Cli& c, std::vector<KvBench> benches) {
  auto boot = world::connect_ranks(c.ranks, c.dev.timeout());
  const kv::KvSpec& shape = benches.front().spec;
  if (boot.size() != shape.prefill_tp + shape.decode_tp) {
    throw UsageError(world::rank_count_mismatch(
        fmt::format("prefill TP {} and decode TP {}", shape.prefill_tp, shape.decode_tp),
        shape.prefill_tp + shape.decode_tp, boot.size()));
  }
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
  so.qps = c.qps;
  const kv::KvSpec& first = benches.front().spec;
  Session session(boot, ctx, std::move(benches), so);
  spdlog::info("rank {} of {} ({} rank {}) on {}: world up ({} peers x {} QPs, {} MiB pool), {} benchmark(s)",
               boot.rank(), boot.size(), boot.rank() < first.prefill_tp ? "prefill" : "decode",
               boot.rank() < first.prefill_tp ? boot.rank() : boot.rank() - first.prefill_tp, ctx.device().name(),
               session.world().peers().size(), c.qps, session.world().arena().length() >> 20,
               session.benches().size());
  if (!leader) return follow(session);
  harness::add_fabric_context(ctx, "kv");
  world::add_world_context(boot, so.spin_before_yield, so.qp_timeout);
  add_context(session.benches());
  LeaderOptions lo;
  lo.registration.iterations = c.iters;
  lo.registration.min_time_s = c.duration_s;
  lo.link_bytes_per_s = c.link.empty() ? ctx.port().rate_gbps * 1e9 / 8 : kv::parse_link_rate(c.link);
  lo.wr_cost_s = c.wr_cost_ns * 1e-9;
  if (c.prefill_tps > 0) lo.prefill_tokens_per_s = c.prefill_tps;
  if (c.ttft_ms > 0) lo.ttft_s = c.ttft_ms / 1e3;
  return lead(session, lo);
}

}  // namespace

int kv_main(int argc, char** argv) {
  spdlog::set_default_logger(spdlog::stderr_color_mt("fabench-kv"));
  spdlog::set_pattern("%n: %^%l%$: %v");
  CLI::App app("fabench-kv: KV-cache transfers between prefill and decode ranks, shaped by real models", "fabench-kv");
  Cli c;
  add_options(app, c);
  app.footer(
      "Ranks 0..P-1 are the prefill TP ranks, P..P+D-1 the decode ones: launch P + D ranks with\n"
      "mpirun -np N, srun -n N or fabench-launch -n N (rank and size from the launcher's environment).\n"
      "-d takes a list (rxe0,rxe1): rank r uses entry r mod its length.\n"
      "--plan needs no RDMA: it prints the shape, the WRs per layout and the predicted time.\n"
      "-b/-e are nccl-tests' min/max bytes (not perftest's bidirectional/events).\n"
      "Presets: " + kv_preset_list());
  if (auto rc = harness::parse_command_line(
          app, argc, argv, "fabench-kv",
          "\nGoogle Benchmark flags pass through on rank 0 (--benchmark_format=json, --benchmark_out=FILE,\n"
          "--benchmark_filter=REGEX, --benchmark_repetitions=N, ...).\n")) {
    return *rc;
  }
  if (c.dev.verbose) spdlog::set_level(spdlog::level::debug);
  return harness::run_main("fabench-kv", [&] {
    if (c.plan) {
      const std::string plans = render_plans(c);
      const std::string path = plan_path(c);
      if (path.empty()) {
        std::cout << plans;
      } else {
        std::ofstream out(path);
        out << plans;
        if (!out.flush()) throw UsageError(fmt::format("--json {}: cannot write the file", path));
      }
      return 0;
    }
    return run(c, build_benches(c));
  });
}

}  // namespace fabench::kvbench
