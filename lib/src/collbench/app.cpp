#include "fabench/collbench/app.hpp"

#include <algorithm>
#include <iostream>
#include <limits>

#include <CLI/CLI.hpp>
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "fabench/collbench/roles.hpp"
#include "fabench/harness/cli.hpp"
#include "fabench/harness/report.hpp"
#include "fabench/world/launch.hpp"

namespace fabench::collbench {

namespace {

using harness::UsageError;

struct Cli {
  harness::DeviceFlags dev;
  std::string min_bytes = "1K";
  std::string max_bytes = "4M";
  std::uint32_t factor = 4;
  std::string sizes;
  std::string colls = "allreduce";
  std::string algos = "ring";
  std::string a2a_algos = "pairwise";
  std::string dtypes = "f32";
  std::string op = "sum";
  std::uint64_t iters = 0;
  double duration_s = 0;
  world::RankFlags ranks;
  std::uint32_t pipeline = 1;
  double alpha_us = 10;
};

void add_options(CLI::App& app, Cli& c) {
  harness::add_device_flags(app, c.dev);
  app.add_option("-b,--minbytes", c.min_bytes, "Smallest buffer S in bytes (K, M, G allowed; default 1K)");
  app.add_option("-e,--maxbytes", c.max_bytes, "Largest buffer S (default 4M)");
  app.add_option("-f,--stepfactor", c.factor, "Multiply the size by this from -b to -e (default 4)")
      ->check(harness::whole_number("-f", 2, 1024));
  app.add_option("-s,--size", c.sizes, "Buffer sizes as a list instead of -b/-e/-f, e.g. 4K,1M,64M");
  app.add_option("--coll", c.colls,
                 "Collectives: allreduce, allgather, reducescatter, alltoall, a list (default allreduce)");
  app.add_option("--algo", c.algos, "All-reduce algorithms: ring, rhd, oneshot, auto, a list (default ring)");
  app.add_option("--a2a-algo", c.a2a_algos, "All-to-all algorithms: pairwise, allatonce, a list (default pairwise)");
  app.add_option("--dtype", c.dtypes, "Element types: f32, bf16, f16, a list (default f32)");
  app.add_option("--op", c.op, "Reduction: sum, min or max (default sum)");
  app.add_option("-n,--iters", c.iters, "Calls per benchmark run (default: Google Benchmark's adaptive count)")
      ->check(harness::whole_number("-n", 1, std::numeric_limits<std::int64_t>::max()));
  app.add_option("-D,--duration", c.duration_s, "Run each benchmark for at least this many seconds")
      ->check(harness::positive_seconds("-D"));
  world::add_rank_flags(app, c.ranks);
  app.add_option("--pipeline", c.pipeline, "Ring: sub-chunks per ring chunk (default 1)")
      ->check(harness::whole_number("--pipeline", 1, 64));
  app.add_option("--alpha-us", c.alpha_us,
                 "Cost model: seconds per step, in us (default 10), for predictions and auto");
}

template <typename T, typename Parse>
std::vector<T> parse_list(const std::string& text, const char* flag, Parse parse) {
  std::vector<T> out;
  for (const auto& item : harness::split_list(text)) {
    auto v = parse(item);
    if (!v) throw UsageError(fmt::format("{} {}: unknown value '{}'", flag, text, item));
    out.push_back(*v);
  }
  return out;
}

std::vector<std::uint64_t> buffer_sizes(const Cli& c) {
  if (!c.sizes.empty()) return harness::parse_sizes(c.sizes);
  const auto lo = harness::parse_bytes(c.min_bytes);
  const auto hi = harness::parse_bytes(c.max_bytes);
  if (lo == 0 || hi < lo) throw UsageError(fmt::format("-b {} -e {}: need 0 < -b <= -e", c.min_bytes, c.max_bytes));
  std::vector<std::uint64_t> out;
  for (std::uint64_t s = lo; s <= hi; s *= c.factor) out.push_back(s);
  return out;
}

std::vector<CollSpec> build_specs(const Cli& c) {
  const auto colls = parse_list<coll::Collective>(c.colls, "--coll", coll::parse_collective);
  const auto dtypes = parse_list<coll::DType>(c.dtypes, "--dtype", coll::parse_dtype);
  const auto op = coll::parse_reduce_op(c.op);
  if (!op) throw UsageError(fmt::format("--op {}: expected sum, min or max", c.op));
  auto algos_of = [&](coll::Collective k) -> std::vector<std::pair<coll::Algorithm, bool>> {
    if (k == coll::Collective::kAllGather || k == coll::Collective::kReduceScatter)
      return {{coll::Algorithm::kRing, false}};
    const std::string& text = k == coll::Collective::kAllToAll ? c.a2a_algos : c.algos;
    std::vector<std::pair<coll::Algorithm, bool>> out;
    for (const auto& item : harness::split_list(text)) {
      if (item == "auto" && k == coll::Collective::kAllReduce) {
        out.emplace_back(coll::Algorithm::kRing, true);
        continue;
      }
      const auto a = coll::parse_algorithm(item);
      if (!a || !coll::is_supported(k, *a)) {
        throw UsageError(fmt::format("{} {}: '{}' is not an algorithm of {}",
                                     k == coll::Collective::kAllToAll ? "--a2a-algo" : "--algo", text, item,
                                     coll::collective_name(k)));
      }
      out.emplace_back(*a, false);
    }
    return out;
  };
  std::vector<CollSpec> specs;
  const auto sizes = buffer_sizes(c);
  for (const auto k : colls) {
    for (const auto dt : dtypes) {
      for (const auto s : sizes) {
        // Measured algorithms first, so auto can pick among them.
        auto algos = algos_of(k);
        std::stable_partition(algos.begin(), algos.end(), [](const auto& a) { return !a.second; });
        for (const auto& [a, is_auto] : algos) specs.push_back(CollSpec{k, a, is_auto, dt, *op, s});
      }
    }
  }
  return specs;
}

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
  so.cost.alpha_s = c.alpha_us * 1e-6;
  so.cost.beta_s_per_byte = ctx.port().rate_gbps > 0 ? 8.0 / (ctx.port().rate_gbps * 1e9) : 1e-9;
  so.cost.gamma_s_per_byte = 0.25e-9;
  Session session(boot, ctx, specs, so);
  spdlog::info("rank {} of {} on {}: world up ({} peers, {} MiB arena), {} benchmark(s) to run", boot.rank(),
               boot.size(), ctx.device().name(), session.world().peers().size(), session.world().arena().length() >> 20,
               specs.size());
  if (!leader) return follow(session);
  harness::add_fabric_context(ctx, "coll");
  world::add_world_context(boot, so.spin_before_yield);
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
    if (c.iters > 0 && c.duration_s > 0) throw UsageError("-n and -D contradict each other: fixed count or duration");
    if (!c.sizes.empty() && (app.count("-b") + app.count("-e") > 0)) {
      throw UsageError("-s and -b/-e contradict each other: a list or a range");
    }
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
