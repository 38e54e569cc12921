#include "fabench/coll/cost.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "fabench/base/error.hpp"

namespace fabench::coll {

namespace {

// Everything in double: S may be 2^40 bytes, and the model is an estimate anyway.
struct Terms {
  double n;  // ranks
  double s;  // bytes
  const CostParams& p;
  [[nodiscard]] double steps(double k) const { return k * p.alpha_s; }
  [[nodiscard]] double wire(double bytes) const { return bytes * p.beta_s_per_byte; }
  [[nodiscard]] double math(double bytes) const { return bytes * p.gamma_s_per_byte; }
};

double all_reduce(Algorithm a, std::uint32_t nranks, const Terms& t) {
  const double f = (t.n - 1.0) / t.n;
  switch (a) {
    case Algorithm::kRing: return t.steps(2.0 * (t.n - 1.0)) + t.wire(2.0 * f * t.s) + t.math(f * t.s);
    case Algorithm::kOneShot: return t.steps(1.0) + t.wire((t.n - 1.0) * t.s) + t.math((t.n - 1.0) * t.s);
    case Algorithm::kRecursiveHalvingDoubling:
    case Algorithm::kRecursiveDoubling: {
      const double pow2 = std::bit_floor(nranks);
      const double levels = std::bit_width(nranks) - 1;
      const double fp = (pow2 - 1.0) / pow2;
      double secs = a == Algorithm::kRecursiveDoubling
                        ? t.steps(levels) + t.wire(levels * t.s) + t.math(levels * t.s)
                        : t.steps(2.0 * levels) + t.wire(2.0 * fp * t.s) + t.math(fp * t.s);
      if (!std::has_single_bit(nranks)) secs += t.steps(2.0) + t.wire(2.0 * t.s) + t.math(t.s);
      return secs;
    }
    case Algorithm::kPairwise:
    case Algorithm::kAllAtOnce: break;
  }
  return std::numeric_limits<double>::infinity();
}

}  // namespace

double predict_seconds(Collective c, Algorithm a, std::uint32_t nranks, std::uint64_t bytes, const CostParams& params) {
  if (!is_supported(c, a)) {
    throw UserError(std::string(algorithm_name(a)) + " is not an algorithm for " + std::string(collective_name(c)));
  }
  if (nranks == 0) throw UserError("nranks must be at least 1");
  if (nranks == 1) return 0.0;
  const Terms t{static_cast<double>(nranks), static_cast<double>(bytes), params};
  const double f = (t.n - 1.0) / t.n;
  switch (c) {
    case Collective::kAllReduce: return all_reduce(a, nranks, t);
    case Collective::kAllGather: return t.steps(t.n - 1.0) + t.wire(f * t.s);
    case Collective::kReduceScatter: return t.steps(t.n - 1.0) + t.wire(f * t.s) + t.math(f * t.s);
    case Collective::kAllToAll:
      if (a == Algorithm::kPairwise) return (t.n - 1.0) * (params.alpha_s + t.wire(t.s / t.n));
      return t.steps(1.0) + t.wire(f * t.s);
  }
  return std::numeric_limits<double>::infinity();
}

Algorithm choose_auto(Collective c, std::uint32_t nranks, std::uint64_t bytes, const CostParams& params) {
  const auto algos = algorithms_for(c);
  double best = std::numeric_limits<double>::infinity();
  for (Algorithm a : algos) best = std::min(best, predict_seconds(c, a, nranks, bytes, params));
  for (Algorithm a : algos) {
    if (predict_seconds(c, a, nranks, bytes, params) <= best * (1.0 + kAutoTieFraction)) return a;
  }
  return algos.front();
}

double HostRates::interpolate(const double (&by_size)[3], std::uint64_t bytes) {
  constexpr std::size_t kLast = std::size(kSizes) - 1;
  if (bytes <= kSizes[0]) return by_size[0];
  if (bytes >= kSizes[kLast]) return by_size[kLast];
  std::size_t k = 0;
  while (kSizes[k + 1] < bytes) ++k;
  const double x = std::log2(static_cast<double>(bytes));
  const double x0 = std::log2(static_cast<double>(kSizes[k]));
  const double x1 = std::log2(static_cast<double>(kSizes[k + 1]));
  const double r0 = by_size[k];
  const double r1 = by_size[k + 1];
  if (r0 <= 0 || r1 <= 0) return 0;
  const double f = (x - x0) / (x1 - x0);
  return std::exp2((1.0 - f) * std::log2(r0) + f * std::log2(r1));
}

double HostRates::reduce_rate(DType t, std::uint64_t bytes) const {
  const int i = static_cast<int>(t);
  const double by_size[3] = {reduce_bytes_per_s[0][i], reduce_bytes_per_s[1][i], reduce_bytes_per_s[2][i]};
  return interpolate(by_size, bytes);
}

HostRates calibrate_host(double seconds_each, double budget_s) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration<double>(budget_s);
  // The buffers grow with the size measured, so a host out of budget never fills the largest.
  std::vector<std::byte> a, b;
  const auto grow = [&](std::uint64_t bytes) {
    const std::size_t from = a.size();
    a.resize(bytes);
    b.resize(bytes);
    // Finite values of every type (1.0 in f32 halves, bf16 and f16 alike: 0x3c00 0x3f80 are normal).
    for (std::size_t i = from; i + 4 <= bytes; i += 4) {
      const std::uint32_t v = 0x3f803c00u;
      std::memcpy(&a[i], &v, 4);
      std::memcpy(&b[i], &v, 4);
    }
  };
  HostRates r;
  for (std::size_t k = 0; k < std::size(HostRates::kSizes); ++k) {
    if (k > 0 && Clock::now() > deadline) {  // out of time: the larger sizes as the last one
      for (int t = 0; t < 3; ++t) r.reduce_bytes_per_s[k][t] = r.reduce_bytes_per_s[k - 1][t];
      r.copy_bytes_per_s[k] = r.copy_bytes_per_s[k - 1];
      continue;
    }
    const std::uint64_t bytes = HostRates::kSizes[k];
    grow(bytes);
    // The best of repeated runs for about seconds_each: the rate the host can give, not a
    // moment's interference.
    const auto best_rate = [&](auto&& body) {
      double best = 0;
      const auto stop = Clock::now() + std::chrono::duration<double>(seconds_each);
      int runs = 0;
      while (runs < 1 || (Clock::now() < stop && runs < 1000)) {
        const auto t0 = Clock::now();
        body();
        const double s = std::chrono::duration<double>(Clock::now() - t0).count();
        if (s > 0) best = std::max(best, static_cast<double>(bytes) / s);
        ++runs;
      }
      return best;
    };
    for (const DType t : {DType::kF32, DType::kBF16, DType::kF16}) {
      // min keeps the values as they are, so every repetition reduces the same numbers; sum and
      // min run the same loads, conversions and stores.
      r.reduce_bytes_per_s[k][static_cast<int>(t)] = best_rate(
          [&] { reduce(t, ReduceOp::kMin, a.data(), b.data(), bytes / dtype_size(t)); });
    }
    r.copy_bytes_per_s[k] = best_rate([&] { std::memcpy(a.data(), b.data(), bytes); });
  }
  return r;
}

}  // namespace fabench::coll
