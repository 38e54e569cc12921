// The cost model's calibration (coll/cost.hpp): every rate measured, sane against each other,
// and how rates are read between the measured sizes.
#include <cmath>

#include <catch2/catch.hpp>

#include "fabench/coll/cost.hpp"

using namespace fabench::coll;

TEST_CASE("coll: calibrate_host measures every reduction and the copy at every size", "[coll][cost]") {
  const HostRates r = calibrate_host(0.001);
  for (std::size_t k = 0; k < std::size(HostRates::kSizes); ++k) {
    INFO("size " << HostRates::kSizes[k]);
    // Anything a CPU of the last twenty years does: between 10 MB/s and 10 TB/s.
    CHECK(r.copy_bytes_per_s[k] > 1e7);
    CHECK(r.copy_bytes_per_s[k] < 1e13);
    for (const auto t : {DType::kF32, DType::kBF16, DType::kF16}) {
      CHECK(r.reduce_bytes_per_s[k][static_cast<int>(t)] > 1e7);
      CHECK(r.reduce_bytes_per_s[k][static_cast<int>(t)] < 1e13);
      CHECK(r.gamma_s_per_byte(t, HostRates::kSizes[k]) == Approx(1.0 / r.reduce_bytes_per_s[k][static_cast<int>(t)]));
    }
    CHECK(r.copy_s_per_byte(HostRates::kSizes[k]) == Approx(1.0 / r.copy_bytes_per_s[k]));
  }
}

TEST_CASE("coll: calibrated rates are interpolated between sizes in log scale", "[coll][cost]") {
  HostRates r;
  CHECK(r.gamma_s_per_byte(DType::kBF16, 1 << 20) == 0);  // nothing measured: no reduction term
  CHECK(r.copy_s_per_byte(1 << 20) == 0);
  r.copy_bytes_per_s[0] = 64e9;  // 256 KiB
  r.copy_bytes_per_s[1] = 16e9;  // 4 MiB
  r.copy_bytes_per_s[2] = 4e9;   // 64 MiB
  // At and beyond the ends, the end's rate.
  CHECK(r.copy_rate(0) == 64e9);
  CHECK(r.copy_rate(4096) == 64e9);
  CHECK(r.copy_rate(256 << 10) == 64e9);
  CHECK(r.copy_rate(64ULL << 20) == 4e9);
  CHECK(r.copy_rate(1ULL << 40) == 4e9);
  // At a measured size, its rate; between two, the geometric interpolation: 1 MiB is half way
  // (in octaves) from 256 KiB to 4 MiB, 8 MiB a quarter of the way from 4 MiB to 64 MiB.
  CHECK(r.copy_rate(4 << 20) == Approx(16e9));
  CHECK(r.copy_rate(1 << 20) == Approx(32e9));
  CHECK(r.copy_rate(8 << 20) == Approx(16e9 * std::pow(0.25, 0.25)));
  CHECK(r.copy_s_per_byte(1 << 20) == Approx(1.0 / 32e9));
  // Monotone between the sizes when the rates are.
  double last = r.copy_rate(1);
  for (std::uint64_t b = 1; b <= (1ULL << 30); b *= 2) {
    CHECK(r.copy_rate(b) <= last);
    last = r.copy_rate(b);
  }
  // Each dtype reads its own column; one size not measured gives no rate between it and its neighbours.
  r.reduce_bytes_per_s[0][static_cast<int>(DType::kF16)] = 8e9;
  r.reduce_bytes_per_s[1][static_cast<int>(DType::kF16)] = 2e9;
  CHECK(r.reduce_rate(DType::kF16, 1 << 20) == Approx(4e9));
  CHECK(r.gamma_s_per_byte(DType::kF16, 1 << 20) == Approx(1.0 / 4e9));
  CHECK(r.reduce_rate(DType::kF32, 1 << 20) == 0);
  CHECK(r.reduce_rate(DType::kF16, 8 << 20) == 0);
}
