// Samples and Stats against hand-computed values.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include "fabench/base/error.hpp"
#include "fabench/harness/samples.hpp"
#include "fabench/harness/stats.hpp"

using namespace fabench::harness;

namespace {

std::vector<double> one_to(int n) {
  std::vector<double> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 1.0);
  return v;
}

}  // namespace

TEST_CASE("stats of 1..100, in shuffled order", "[stats]") {
  auto v = one_to(100);
  std::mt19937 rng(7);
  std::shuffle(v.begin(), v.end(), rng);
  const Stats s = compute_stats(v);
  CHECK(s.count == 100);
  CHECK(s.min == 1.0);
  CHECK(s.max == 100.0);
  CHECK(s.mean == 50.5);
  // Nearest rank: x[ceil(p/100 * 100)].
  CHECK(s.p50 == 50.0);
  CHECK(s.p90 == 90.0);
  CHECK(s.p99 == 99.0);
  CHECK(s.p999 == 100.0);
  CHECK(s.p9999 == 100.0);
  // Sample variance of 1..n is n(n+1)/12 = 841.666...
  CHECK(s.stddev == Approx(std::sqrt(100.0 * 101.0 / 12.0)).epsilon(1e-12));
  CHECK(s.stddev == Approx(29.011491975882016).epsilon(1e-12));
}

TEST_CASE("nearest rank is exact where floating point would round up", "[stats]") {
  // 99.9 / 100 * 1000 is 999.0000000000001 in doubles: ceil() of it would
  // pick x[1000]; the rank must be 999 (and 9990 of 10 000).
  const Stats s1000 = compute_stats(one_to(1000));
  CHECK(s1000.p50 == 500.0);
  CHECK(s1000.p90 == 900.0);
  CHECK(s1000.p99 == 990.0);
  CHECK(s1000.p999 == 999.0);
  CHECK(s1000.p9999 == 1000.0);
  const Stats s10k = compute_stats(one_to(10'000));
  CHECK(s10k.p999 == 9990.0);
  CHECK(s10k.p9999 == 9999.0);
  const Stats s7 = compute_stats(one_to(7));  // ceil(3.5) = 4, ceil(6.3) = 7
  CHECK(s7.p50 == 4.0);
  CHECK(s7.p90 == 7.0);
}

TEST_CASE("a single sample is every statistic, with no spread", "[stats]") {
  const std::vector<double> v = {7.25};
  const Stats s = compute_stats(v);
  CHECK(s.count == 1);
  CHECK(s.min == 7.25);
  CHECK(s.mean == 7.25);
  CHECK(s.p50 == 7.25);
  CHECK(s.p9999 == 7.25);
  CHECK(s.max == 7.25);
  CHECK(s.stddev == 0.0);
}

TEST_CASE("stddev is the sample standard deviation, stable at large offsets", "[stats]") {
  const std::vector<double> v = {2, 4, 4, 4, 5, 5, 7, 9};  // population stddev 2
  CHECK(compute_stats(v).stddev == Approx(std::sqrt(32.0 / 7.0)).epsilon(1e-12));
  // Latencies in ns since some epoch: a naive sum of squares loses these digits.
  const std::vector<double> big = {1e12 + 1, 1e12 + 2, 1e12 + 3};
  CHECK(compute_stats(big).stddev == Approx(1.0).epsilon(1e-9));
  CHECK(compute_stats(big).mean == 1e12 + 2);
}

TEST_CASE("no samples: count 0, NaN statistics", "[stats]") {
  const Stats s = compute_stats(std::vector<double>{});
  CHECK(s.count == 0);
  CHECK(std::isnan(s.mean));
  CHECK(std::isnan(s.p50));
  CHECK(std::isnan(s.max));
  CHECK(std::isnan(percentile(std::vector<double>{}, 50.0)));
}

TEST_CASE("percentile endpoints and bounds", "[stats]") {
  const auto v = one_to(10);
  CHECK(percentile(v, 0.0) == 1.0);
  CHECK(percentile(v, 100.0) == 10.0);
  CHECK(percentile(v, 10.0) == 1.0);
  CHECK(percentile(v, 10.1) == 2.0);
  CHECK(percentile_ppm(v, 999'999) == 10.0);
  CHECK_THROWS_AS(percentile(v, 100.5), fabench::UserError);
  CHECK_THROWS_AS(percentile(v, -1.0), fabench::UserError);
  CHECK_THROWS_AS(percentile_ppm(v, 1'000'001), fabench::UserError);
}

TEST_CASE("compute_stats leaves the caller's order alone, the in-place form sorts", "[stats]") {
  std::vector<double> v = {3, 1, 2};
  (void)compute_stats(v);
  CHECK(v == std::vector<double>{3, 1, 2});
  (void)compute_stats_in_place(v);
  CHECK(v == std::vector<double>{1, 2, 3});
}

TEST_CASE("Samples keeps every sample, in order, in its one buffer", "[stats][samples]") {
  Samples s(1000);
  REQUIRE(s.capacity() == 1000);
  const double* buffer = s.values().data();
  for (int i = 0; i < 999; ++i) REQUIRE(s.record(1.0));
  REQUIRE(s.record(1e9));  // the one outlier must survive
  CHECK(s.full());
  CHECK(s.size() == 1000);
  CHECK(s.values().data() == buffer);  // no reallocation while recording
  CHECK(s.values().back() == 1e9);
  const Stats st = s.stats();
  CHECK(st.count == 1000);
  CHECK(st.max == 1e9);
  CHECK(st.p9999 == 1e9);
  CHECK(st.p999 == 1.0);
  CHECK(st.mean == Approx((999.0 + 1e9) / 1000.0));

  SECTION("a full buffer rejects, counts, and refuses to summarize") {
    CHECK_FALSE(s.record(2.0));
    CHECK(s.rejected() == 1);
    CHECK(s.size() == 1000);
    CHECK_THROWS_WITH(s.stats(), Catch::Contains("1 samples arrived after the 1000-sample buffer was full"));
  }
  SECTION("clear keeps the buffer") {
    s.clear();
    CHECK(s.empty());
    CHECK(s.capacity() == 1000);
    REQUIRE(s.record(5.0));
    CHECK(s.values().data() == buffer);
    CHECK(s.stats().p50 == 5.0);
  }
}

TEST_CASE("a default Samples has no room and says so", "[stats][samples]") {
  Samples s;
  CHECK_FALSE(s.record(1.0));
  CHECK(s.rejected() == 1);
  CHECK_THROWS_AS(s.stats(), fabench::RunError);
  s.reserve(4);
  CHECK(s.rejected() == 0);
  CHECK(s.record(1.0));
}

TEST_CASE("Samples::reserve in steps calls back after each and leaves the same buffer", "[stats][samples]") {
  const std::size_t n = 3 * Samples::kReserveStep + 5;
  Samples s;
  REQUIRE(s.record(1.0) == false);  // no room yet: one rejected
  int calls = 0;
  s.reserve(n, [&calls] { ++calls; });
  CHECK(calls == 4);  // three whole steps and the rest
  CHECK(s.capacity() == n);
  CHECK(s.size() == 0);
  CHECK(s.rejected() == 0);
  for (std::size_t i = 0; i < n; ++i) REQUIRE(s.record(static_cast<double>(i)));
  CHECK(s.full());
  CHECK(s.values()[n - 1] == static_cast<double>(n - 1));
  // Smaller than what it holds: one step, and the room is exactly what was asked.
  calls = 0;
  s.reserve(10, [&calls] { ++calls; });
  CHECK(calls == 1);
  CHECK(s.capacity() == 10);
  CHECK(s.empty());
}
