// fabench_cpu_budget: the host-side work between RDMA operations, timed beside memcpy of the
// same bytes in the same run (../../shared DESIGN.md, "Speed of a real link"; the table and
// what each row can feed per core are in docs/results/cpu.md). Built with the tests, not
// installed.
//
// Each reduction and copy benchmark alternates, every iteration, the measured operation and a
// memcpy of the same payload between two other buffers of the same size: the time reported is
// the operation's alone (manual time), and `memcpy_GBps` and `x_memcpy` compare it with the
// copy measured in the same iterations, so drift of the machine between benchmarks does not
// enter the ratio. GBps is 1e9 bytes per second of payload (dst bytes for a reduction).
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <chrono>
#include <memory>
#include <cstdlib>
#include <cstring>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "fabench/coll/reduce.hpp"
#include "fabench/collbench/reduce_pool.hpp"
#include "fabench/harness/stats.hpp"
#include "fabench/kv/layout.hpp"
#include "fabench/kv/model.hpp"
#include "fabench/kv/pattern.hpp"
#include "fabench/kv/plan.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using namespace fabench;

// Page-aligned, as fabench's arenas are (their regions are 64-byte aligned).
struct Aligned {
  std::unique_ptr<std::byte, decltype(&std::free)> p;
  std::size_t n;
  explicit Aligned(std::size_t bytes)
      : p(static_cast<std::byte*>(std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096)), &std::free), n(bytes) {
    if (!p) throw std::bad_alloc();
  }
  [[nodiscard]] std::byte* data() const { return p.get(); }
  [[nodiscard]] std::size_t size() const { return n; }
  std::byte& operator[](std::size_t i) const { return p.get()[i]; }
};

struct Buffers {
  Aligned dst, src, copy_dst, copy_src;
  explicit Buffers(std::size_t bytes) : dst(bytes), src(bytes), copy_dst(bytes), copy_src(bytes) {
    std::mt19937 rng(1);
    // Finite values of every type: small integers as f32 bits would be subnormal, so fill with
    // the patterns of floats in [1, 2) (f32) / their top halves (bf16), and f16 ones in [1, 2).
    for (std::size_t i = 0; i + 4 <= bytes; i += 4) {
      const std::uint32_t v = 0x3f800000u | (rng() & 0x7fffffu);
      std::memcpy(&dst[i], &v, 4);
      std::memcpy(&src[i], &v, 4);
    }
    std::memset(copy_src.data(), 1, bytes);
    std::memset(copy_dst.data(), 2, bytes);
  }
};

Buffers& buffers(std::size_t bytes) {
  static std::vector<std::unique_ptr<Buffers>> all;
  for (auto& b : all) {
    if (b->dst.size() == bytes) return *b;
  }
  all.push_back(std::make_unique<Buffers>(bytes));
  return *all.back();
}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Runs `op` per iteration (timed) and a memcpy of the same bytes beside it (timed apart).
template <class Op>
void alternate_with_memcpy(benchmark::State& state, std::size_t bytes, Buffers& b, Op op) {
  double copy_s = 0;
  double op_s = 0;
  for (auto _ : state) {
    auto t = Clock::now();
    op();
    const double s = seconds_since(t);
    state.SetIterationTime(s);
    op_s += s;
    t = Clock::now();
    std::memcpy(b.copy_dst.data(), b.copy_src.data(), bytes);
    copy_s += seconds_since(t);
    benchmark::DoNotOptimize(b.dst.data());
    benchmark::DoNotOptimize(b.copy_dst.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
  const auto total = static_cast<double>(state.iterations() * bytes);
  state.counters["GBps"] = total / op_s / 1e9;
  state.counters["memcpy_GBps"] = total / copy_s / 1e9;
  state.counters["x_memcpy"] = copy_s / op_s;
}

void reduce_bench(benchmark::State& state, coll::ReducePath path, coll::DType t, coll::ReduceOp op) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  Buffers& b = buffers(bytes);
  const std::size_t count = bytes / coll::dtype_size(t);
  alternate_with_memcpy(state, bytes, b, [&] { coll::reduce_on(path, t, op, b.dst.data(), b.src.data(), count); });
}

// The same over --reduce-threads' pool (the active path): what N cores of one rank reduce.
void pool_bench(benchmark::State& state, coll::DType t, std::uint32_t threads) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  Buffers& b = buffers(bytes);
  collbench::ReducePool pool(threads);
  alternate_with_memcpy(state, bytes, b, [&] {
    pool.run(coll::OpKind::kReduce, t, coll::ReduceOp::kSum, b.dst.data(), b.src.data(), bytes);
  });
}

void memcpy_bench(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  Buffers& b = buffers(bytes);
  alternate_with_memcpy(state, bytes, b, [&] { std::memcpy(b.dst.data(), b.src.data(), bytes); });
}

// Statistics of a run's samples: 10 M latencies summarised (sorted, percentiles, moments).
void stats_bench(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  std::vector<double> samples(n);
  std::mt19937_64 rng(3);
  std::lognormal_distribution<double> dist(8.0, 0.3);
  for (auto& s : samples) s = dist(rng);
  for (auto _ : state) {
    auto t = Clock::now();
    const auto st = harness::compute_stats(samples);
    state.SetIterationTime(seconds_since(t));
    benchmark::DoNotOptimize(st.p99);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
}

kv::KvSpec kv_spec() {
  kv::KvSpec s;
  s.model = kv::preset("llama-3.1-8b");  // 128 KiB per token, 16-token pages of 2 MiB
  s.isl = 512;
  s.batch = 1;
  return s;
}

// KV pages: the pattern written before a transfer (poison/fill) and checked after it.
void kv_fill_bench(benchmark::State& state) {
  const auto s = kv_spec();
  std::vector<std::byte> pool(kv::pool_bytes(s, kv::Side::kPrefill, 0));
  for (auto _ : state) {
    auto t = Clock::now();
    kv::fill_pool(s, kv::Side::kPrefill, 0, pool);
    state.SetIterationTime(seconds_since(t));
    benchmark::DoNotOptimize(pool.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * pool.size()));
}

void kv_check_bench(benchmark::State& state) {
  auto s = kv_spec();
  std::vector<std::byte> pool(kv::pool_bytes(s, kv::Side::kDecode, 0));
  kv::fill_pool(s, kv::Side::kDecode, 0, pool);
  std::uint64_t wrong = 0;
  for (auto _ : state) {
    auto t = Clock::now();
    wrong += kv::count_wrong_pages(s, kv::Side::kDecode, 0, pool);
    state.SetIterationTime(seconds_since(t));
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * pool.size()));
  state.counters["wrong_pages"] = static_cast<double>(wrong);
}

// Building a transfer's work-request lists (every page of the batch, fragmented, unmerged).
void kv_plan_bench(benchmark::State& state) {
  auto s = kv_spec();
  s.fragmentation = 1.0;
  s.merge = false;
  std::uint64_t wrs = 0;
  for (auto _ : state) {
    auto t = Clock::now();
    const auto plans = kv::make_plans(s);
    state.SetIterationTime(seconds_since(t));
    for (const auto& p : plans) wrs += p.wrs.size();
  }
  state.counters["WRs_per_s"] = benchmark::Counter(static_cast<double>(wrs), benchmark::Counter::kIsRate);
}

void register_all() {
  const std::vector<std::int64_t> sizes = {8 << 20, 64 << 20};
  for (const auto bytes : sizes) {
    benchmark::RegisterBenchmark("memcpy", memcpy_bench)->Arg(bytes)->UseManualTime()->Unit(benchmark::kMillisecond);
  }
  for (const auto path : coll::available_reduce_paths()) {
    for (const auto t : {coll::DType::kF32, coll::DType::kBF16, coll::DType::kF16}) {
      for (const auto op : {coll::ReduceOp::kSum, coll::ReduceOp::kMin, coll::ReduceOp::kMax}) {
        const std::string name = fmt::format("reduce/{}/{}/{}", coll::reduce_path_name(path), coll::dtype_name(t),
                                             coll::reduce_op_name(op));
        for (const auto bytes : sizes) {
          benchmark::RegisterBenchmark(name.c_str(), reduce_bench, path, t, op)
              ->Arg(bytes)
              ->UseManualTime()
              ->Unit(benchmark::kMillisecond);
        }
      }
    }
  }
  for (const auto t : {coll::DType::kF32, coll::DType::kBF16, coll::DType::kF16}) {
    for (const std::uint32_t threads : {1U, 2U}) {
      const std::string name = fmt::format("reduce_threads/{}/sum/{}", coll::dtype_name(t), threads);
      for (const auto bytes : sizes) {
        benchmark::RegisterBenchmark(name.c_str(), pool_bench, t, threads)
            ->Arg(bytes)
            ->UseManualTime()
            ->Unit(benchmark::kMillisecond);
      }
    }
  }
  benchmark::RegisterBenchmark("stats", stats_bench)->Arg(10'000'000)->UseManualTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("kv/fill", kv_fill_bench)->UseManualTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("kv/check", kv_check_bench)->UseManualTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("kv/plan", kv_plan_bench)->UseManualTime()->Unit(benchmark::kMillisecond);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::AddCustomContext("reduce_path", std::string(coll::reduce_path_name(coll::active_reduce_path())));
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
