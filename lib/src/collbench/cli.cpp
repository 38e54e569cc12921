#include "fabench/collbench/cli.hpp"

#include <algorithm>
#include <limits>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace fabench::collbench {

using harness::UsageError;

void add_options(CLI::App& app, Cli& c) {
  harness::add_device_flags(app, c.dev);
  const auto range = [&c](const std::string& /*value*/) { c.range_given = true; };
  app.add_option(
         "-b,--minbytes", c.min_bytes,
         "Smallest buffer S in bytes (K, M, G allowed; default 1K) (nccl-tests' -b; not perftest's bidirectional)")
      ->each(range);
  app.add_option("-e,--maxbytes", c.max_bytes, "Largest buffer S (default 4M) (nccl-tests' -e; not perftest's events)")
      ->each(range);
  app.add_option("-f,--stepfactor", c.factor, "Multiply the size by this from -b to -e (default 4)")
      ->check(harness::whole_number("-f", 2, 1024));
  app.add_option("-s,--size", c.sizes, "Buffer sizes as a list instead of -b/-e/-f, e.g. 4K,1M,64M");
  app.add_option("--coll", c.colls,
                 "Collectives: allreduce, allgather, reducescatter, alltoall, a list (default allreduce)");
  app.add_option("--algo", c.algos, "All-reduce algorithms: ring, rhd, oneshot, rd, auto, a list (default ring)");
  app.add_option("--a2a-algo", c.a2a_algos, "All-to-all algorithms: pairwise, allatonce, a list (default pairwise)");
  app.add_option("--dtype", c.dtypes, "Element types: f32 (fp32), bf16, f16 (fp16), a list (default f32)");
  app.add_option("--op", c.op, "Reduction: sum, min or max (default sum)");
  app.add_option("-n,--iters", c.iters, "Calls per benchmark run (default: Google Benchmark's adaptive count)")
      ->check(harness::whole_number("-n", 1, std::numeric_limits<std::int64_t>::max()));
  app.add_option("-D,--duration", c.duration_s, "Run each benchmark for at least this many seconds")
      ->check(harness::positive_seconds("-D"));
  world::add_rank_flags(app, c.ranks);
  app.add_option("--pipeline", c.pipeline,
                 "Ring: sub-chunks per ring chunk, reduced while the next flies (default: S/n / 512 KiB, 1..8)")
      ->check(harness::whole_number("--pipeline", 1, 64));
  app.add_option("--alpha-us", c.alpha_us,
                 "Cost model: seconds per step, in us (default 10 for rdma, 1 for shm), for predictions and auto")
      ->check(harness::number_at_least("--alpha-us", 0));
  app.add_option("--transport", c.transport,
                 "rdma (default: RDMA writes on the device) or shm (every rank on this host, shared memory)");
  app.add_option("--compute", c.compute,
                 "full (default) or none: reductions and copies skipped, as if free; output not checked");
  app.add_option("-w,--warmup", c.warmup, "Untimed calls before each benchmark (default 2: both buffer parities; nccl-tests' -w)")
      ->check(harness::whole_number("-w", 0, 1000000));
  app.add_option("--reduce-threads", c.reduce_threads, "Threads per rank for local reductions and copies (default 1)")
      ->check(harness::whole_number("--reduce-threads", 1, 64));
}

namespace {

template <typename T, typename Parse>
std::vector<T> parse_list(const std::string& text, const char* flag, Parse parse, const char* choices) {
  std::vector<T> out;
  for (const auto& item : harness::split_list(text)) {
    auto v = parse(item);
    if (!v) throw UsageError(fmt::format("{} {}: unknown value '{}' ({})", flag, text, item, choices));
    out.push_back(*v);
  }
  return out;
}

}  // namespace

std::vector<std::uint64_t> buffer_sizes(const Cli& c) {
  if (!c.sizes.empty()) return harness::parse_sizes(c.sizes);
  return harness::size_range(c.min_bytes, c.max_bytes, c.factor);
}

std::vector<CollSpec> build_specs(const Cli& c) {
  if (c.iters > 0 && c.duration_s > 0) throw UsageError("-n and -D contradict each other: fixed count or duration");
  if (!c.sizes.empty() && c.range_given) throw UsageError("-s and -b/-e contradict each other: a list or a range");
  const auto colls = parse_list<coll::Collective>(c.colls, "--coll", coll::parse_collective,
                                                  "allreduce, allgather, reducescatter, alltoall");
  const auto dtypes = parse_list<coll::DType>(c.dtypes, "--dtype", coll::parse_dtype, "f32 (fp32), bf16, f16 (fp16)");
  if (c.compute != "full" && c.compute != "none") {
    throw UsageError(fmt::format("--compute {}: expected full or none", c.compute));
  }
  (void)transport_of(c);
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
  // Both lists are checked even when no collective of the run uses them.
  (void)algos_of(coll::Collective::kAllReduce);
  (void)algos_of(coll::Collective::kAllToAll);
  std::vector<CollSpec> specs;
  const auto sizes = buffer_sizes(c);
  for (const auto k : colls) {
    for (const auto dt : dtypes) {
      for (const auto s : sizes) {
        // Measured algorithms first, so auto can pick among them.
        auto algos = algos_of(k);
        std::stable_partition(algos.begin(), algos.end(), [](const auto& a) { return !a.second; });
        for (const auto& [a, is_auto] : algos)
          specs.push_back(CollSpec{k, a, is_auto, dt, *op, s, c.compute == "full"});
      }
    }
  }
  return specs;
}

TransportKind transport_of(const Cli& c) {
  if (c.transport == "rdma") return TransportKind::kRdma;
  if (c.transport == "shm") return TransportKind::kShm;
  throw UsageError(fmt::format("--transport {}: expected rdma or shm", c.transport));
}

}  // namespace fabench::collbench
