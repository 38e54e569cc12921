#include "fabench/harness/stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "fabench/base/error.hpp"
#include "fabench/harness/samples.hpp"

namespace fabench::harness {

double percentile_ppm(std::span<const double> sorted, std::uint32_t per_million) {
  if (sorted.empty()) return std::numeric_limits<double>::quiet_NaN();
  if (per_million > 1'000'000) {
    throw UserError("percentile above 100: " + std::to_string(per_million) + " parts per million");
  }
  const std::uint64_t n = sorted.size();
  // rank = ceil(per_million * n / 10^6), 1-based; exact in integers for n < 1.8e13.
  std::uint64_t rank = (static_cast<std::uint64_t>(per_million) * n + 999'999) / 1'000'000;
  rank = std::clamp<std::uint64_t>(rank, 1, n);
  return sorted[rank - 1];
}

double percentile(std::span<const double> sorted, double percent) {
  if (!(percent >= 0.0 && percent <= 100.0)) {
    throw UserError("percentile must be within 0..100, not " + std::to_string(percent));
  }
  return percentile_ppm(sorted, static_cast<std::uint32_t>(std::llround(percent * 10'000.0)));
}

Stats compute_stats_in_place(std::span<double> values) {
  Stats s;
  s.count = values.size();
  if (values.empty()) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    s.min = s.mean = s.p50 = s.p90 = s.p99 = s.p999 = s.p9999 = s.max = s.stddev = nan;
    return s;
  }
  std::sort(values.begin(), values.end());
  const std::span<const double> sorted = values;
  s.min = sorted.front();
  s.max = sorted.back();
  s.p50 = percentile_ppm(sorted, std::uint32_t{500'000});
  s.p90 = percentile_ppm(sorted, std::uint32_t{900'000});
  s.p99 = percentile_ppm(sorted, std::uint32_t{990'000});
  s.p999 = percentile_ppm(sorted, std::uint32_t{999'000});
  s.p9999 = percentile_ppm(sorted, std::uint32_t{999'900});

  // Two passes (mean, then squared deviations) rather than sum of squares:
  // latencies share a large common offset, and sum-of-squares cancels badly.
  double sum = 0;
  for (double v : sorted) sum += v;
  const auto n = static_cast<double>(sorted.size());
  s.mean = sum / n;
  if (sorted.size() > 1) {
    double sq = 0;
    for (double v : sorted) sq += (v - s.mean) * (v - s.mean);
    s.stddev = std::sqrt(sq / (n - 1.0));
  } else {
    s.stddev = 0;
  }
  return s;
}

Stats compute_stats(std::span<const double> values) {
  std::vector<double> copy(values.begin(), values.end());
  return compute_stats_in_place(copy);
}

Stats Samples::stats() const {
  if (rejected_ > 0) {
    throw RunError("statistics refused: " + std::to_string(rejected_) + " samples arrived after the " +
                   std::to_string(values_.size()) + "-sample buffer was full");
  }
  return compute_stats(values());
}

}  // namespace fabench::harness
