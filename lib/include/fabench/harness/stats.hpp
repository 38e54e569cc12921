// Stats: the summary of one run's samples, computed in double precision from
// every sample (nothing trimmed, no outliers removed).
//
// Percentiles use the nearest-rank definition, everywhere in fabench: the
// p-th percentile of n sorted samples x[1..n] is x[ceil(p/100 * n)] (and x[1]
// for p = 0), so it is always a value that was measured, and p100 is the
// maximum. The rank is computed in integers (p in parts per million), so
// p99.9 of 1000 samples is exactly x[999], not x[1000] through rounding.
//
// stddev is the sample standard deviation (divide by n - 1, as Google
// Benchmark's aggregates do); 0 for a single sample.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace fabench::harness {

struct Stats {
  std::size_t count = 0;
  // For count == 0 every value below is NaN.
  double min = 0;
  double mean = 0;
  double p50 = 0;
  double p90 = 0;
  double p99 = 0;
  double p999 = 0;   // p99.9
  double p9999 = 0;  // p99.99
  double max = 0;
  double stddev = 0;
};

// Nearest-rank percentile of ascending `sorted`; `per_million` is p * 10^4
// (p50 = 500'000, p99.99 = 999'900), at most 1'000'000. NaN when empty.
[[nodiscard]] double percentile_ppm(std::span<const double> sorted, std::uint32_t per_million);
// The same with p in percent (0..100), rounded to the nearest part per million.
[[nodiscard]] double percentile(std::span<const double> sorted, double percent);

// Sorts `values` in place, then summarizes them.
[[nodiscard]] Stats compute_stats_in_place(std::span<double> values);
// Summarizes a copy (the caller's order is kept).
[[nodiscard]] Stats compute_stats(std::span<const double> values);

}  // namespace fabench::harness
