// The alpha-beta-gamma cost model of the collective algorithms, and the choice `--algo auto`
// makes from it when no measurements are given.
//
// alpha: seconds per step (latency of one message, posting included); beta: seconds per byte on
// a rank's link; gamma: seconds per byte reduced locally. S is logical_bytes() (the full buffer);
// N the rank count; p = 2^floor(log2 N). Each step is charged the largest message a rank sends
// in it; links are full duplex and nothing contends (no incast, no shared switch uplinks).
//   all-reduce  ring      2(N-1) a + 2(N-1)/N S b + (N-1)/N S g
//               rhd       2 log2(p) a + 2(p-1)/p S b + (p-1)/p S g
//                         + (N != p ? 2 a + 2 S b + S g : 0)       (fold in, send back)
//               rd        log2(p) a + log2(p) S b + log2(p) S g  + the same fold term
//               oneshot   a + (N-1) S b + (N-1) S g
//   all-gather     ring   (N-1) a + (N-1)/N S b
//   reduce-scatter ring   (N-1) a + (N-1)/N S b + (N-1)/N S g
//   all-to-all pairwise   (N-1) (a + S/N b)
//              allatonce  a + (N-1)/N S b
// pipeline_chunks is not modelled. N = 1 costs 0. Local copies are not in these formulas:
// fabench-coll adds each schedule's own copy bytes at the calibrated copy rate.
#pragma once

#include <cstdint>

#include "fabench/coll/reduce.hpp"
#include "fabench/coll/schedule.hpp"

namespace fabench::coll {

struct CostParams {
  double alpha_s = 0.0;
  double beta_s_per_byte = 0.0;
  double gamma_s_per_byte = 0.0;  // the dtype's; HostRates gives it per dtype
};

// This host's reduction (on the active path, per dtype) and copy rates, in bytes per second of
// destination, measured by calibrate_host() at three working-set sizes (within L2, within L3,
// beyond it; each kernel's two buffers of that size). The rate for n bytes is interpolated
// between the two measured sizes around n, linearly in log(size) and log(rate), and is the
// nearest measured one outside them; 0 where nothing was measured.
struct HostRates {
  static constexpr std::uint64_t kSizes[3] = {256ULL << 10, 4ULL << 20, 64ULL << 20};
  double reduce_bytes_per_s[3][3] = {};  // [size][DType]
  double copy_bytes_per_s[3] = {};       // [size]
  [[nodiscard]] static double interpolate(const double (&by_size)[3], std::uint64_t bytes);
  [[nodiscard]] double reduce_rate(DType t, std::uint64_t bytes) const;
  [[nodiscard]] double copy_rate(std::uint64_t bytes) const { return interpolate(copy_bytes_per_s, bytes); }
  [[nodiscard]] double gamma_s_per_byte(DType t, std::uint64_t bytes) const {
    const double r = reduce_rate(t, bytes);
    return r > 0 ? 1.0 / r : 0.0;
  }
  [[nodiscard]] double copy_s_per_byte(std::uint64_t bytes) const {
    const double r = copy_rate(bytes);
    return r > 0 ? 1.0 / r : 0.0;
  }
};
// Times each reduction and memcpy at each size (the best of repeated runs for about
// `seconds_each`, at least one run), smallest first; once `budget_s` has gone, the larger sizes
// take the last measured size's rates (a slow or emulated host stays within a fraction of a
// second; about 0.1 s on this project's development host).
[[nodiscard]] HostRates calibrate_host(double seconds_each = 0.004, double budget_s = 0.25);

// Predicted seconds for one call moving `bytes` = S. Throws std::invalid_argument for an
// unsupported collective/algorithm pair or nranks == 0.
[[nodiscard]] double predict_seconds(Collective c, Algorithm a, std::uint32_t nranks, std::uint64_t bytes,
                                     const CostParams& params);

// Predictions within this fraction of the fastest count as equal.
inline constexpr double kAutoTieFraction = 0.02;

// The supported algorithm for c with the smallest prediction; among those within
// kAutoTieFraction of it, the first of algorithms_for(c) (ring first). The tie rule matters at
// large S: for a power-of-two N recursive halving-doubling has the ring's bandwidth terms and
// fewer alpha terms, so the model alone never prefers the ring; once the difference is a few
// alphas in a bandwidth-bound total it is below what the model can resolve, and the ring talks
// to neighbours only (two QPs per rank, least exposed to the contention the model leaves out).
// For all-to-all the model always favours allatonce (incast is not in it).
[[nodiscard]] Algorithm choose_auto(Collective c, std::uint32_t nranks, std::uint64_t bytes, const CostParams& params);

}  // namespace fabench::coll
