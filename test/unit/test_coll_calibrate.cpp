// The cost model's calibration (coll/cost.hpp): every rate measured, sane against each other,
// and the size buckets rates are read from.
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

TEST_CASE("coll: calibrated rates are read at the nearest size, in log scale", "[coll][cost]") {
  CHECK(HostRates::bucket(0) == 0);
  CHECK(HostRates::bucket(4096) == 0);
  CHECK(HostRates::bucket(256 << 10) == 0);
  CHECK(HostRates::bucket(1 << 20) == 0);  // 2 octaves from 256 KiB and from 4 MiB: the smaller size wins a tie
  CHECK(HostRates::bucket(2 << 20) == 1);
  CHECK(HostRates::bucket(4 << 20) == 1);
  CHECK(HostRates::bucket(16ULL << 20) == 1);
  CHECK(HostRates::bucket(32ULL << 20) == 2);
  CHECK(HostRates::bucket(1ULL << 40) == 2);
  HostRates r;
  CHECK(r.gamma_s_per_byte(DType::kBF16, 1 << 20) == 0);  // nothing measured: no reduction term
}
