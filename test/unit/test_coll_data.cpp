// The exact input generator: every partial sum, in any order, stays exactly representable, the
// data is not trivially zero, and the expected outputs follow the collectives' definitions.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "fabench/coll/data.hpp"

using namespace fabench::coll;

namespace {

std::int64_t exact_limit(DType t) { return t == DType::kF32 ? (1 << 24) : (t == DType::kF16 ? (1 << 11) : (1 << 8)); }

std::vector<std::byte> input_of(const DataSpec& d, std::uint32_t rank, std::uint64_t count) {
  std::vector<std::byte> v(count * dtype_size(d.dtype));
  fill_input(d, rank, v.data(), count);
  return v;
}

}  // namespace

TEST_CASE("coll: sum data: totals stay within the exact range and are rarely zero", "[coll][data]") {
  for (DType t : {DType::kF32, DType::kBF16, DType::kF16}) {
    for (std::uint32_t n : {1u, 2u, 3u, 17u, 36u, 37u, 85u, 86u, 136u, 137u, 1000u, 1024u}) {
      INFO(dtype_name(t) << " n=" << n);
      const DataSpec d{t, ReduceOp::kSum, n, 99};
      std::int64_t worst = 0;
      std::uint64_t zero_totals = 0;
      const std::uint64_t elems = 300;
      for (std::uint64_t i = 0; i < elems; ++i) {
        std::int64_t total = 0;
        for (std::uint32_t r = 0; r < n; ++r) {
          const std::int32_t v = input_value(d, r, i);
          REQUIRE(v >= 0);
          REQUIRE(v <= 255);
          total += v;
        }
        worst = std::max(worst, total);
        zero_totals += total == 0;
      }
      CHECK(worst <= exact_limit(t));
      CHECK(worst > 0);
      CHECK(zero_totals <= elems / 20);
    }
  }
}

TEST_CASE("coll: sum data is exact through float reduction in any order at 1024 ranks", "[coll][data]") {
  for (DType t : {DType::kBF16, DType::kF16, DType::kF32}) {
    const std::uint32_t n = 1024;
    const std::uint64_t count = 257;
    const DataSpec d{t, ReduceOp::kSum, n, 5};
    std::vector<std::vector<std::byte>> inputs;
    for (std::uint32_t r = 0; r < n; ++r) inputs.push_back(input_of(d, r, count));
    std::vector<std::byte> want(count * dtype_size(t));
    reference_reduction(d, count, want.data());
    // Forwards, backwards and shuffled: each a different rounding path if anything rounded.
    std::vector<std::uint32_t> order(n);
    std::iota(order.begin(), order.end(), 0u);
    std::mt19937 rng(3);
    for (int pass = 0; pass < 3; ++pass) {
      if (pass == 1) std::reverse(order.begin(), order.end());
      if (pass == 2) std::shuffle(order.begin(), order.end(), rng);
      std::vector<std::byte> acc = inputs[order[0]];
      for (std::uint32_t k = 1; k < n; ++k) reduce(t, ReduceOp::kSum, acc.data(), inputs[order[k]].data(), count);
      CHECK(count_wrong(t, acc.data(), want.data(), count) == 0);
    }
    // And the reference is not all zeros.
    std::uint64_t nonzero = 0;
    for (std::uint64_t i = 0; i < count; ++i) nonzero += load_element(t, want.data() + i * dtype_size(t)) != 0.0f;
    CHECK(nonzero > count * 9 / 10);
  }
}

TEST_CASE("coll: min and max data is dense, signed and exact", "[coll][data]") {
  for (DType t : {DType::kF32, DType::kBF16, DType::kF16}) {
    const DataSpec d{t, ReduceOp::kMin, 300, 11};
    const std::int64_t bound = t == DType::kF32 ? (1 << 20) : exact_limit(t);
    std::int64_t lo = 0;
    std::int64_t hi = 0;
    for (std::uint32_t r = 0; r < 300; r += 7) {
      const auto in = input_of(d, r, 200);
      for (std::uint64_t i = 0; i < 200; ++i) {
        const std::int32_t v = input_value(d, r, i);
        REQUIRE(std::abs(v) <= bound);
        REQUIRE(load_element(t, in.data() + i * dtype_size(t)) == static_cast<float>(v));
        lo = std::min<std::int64_t>(lo, v);
        hi = std::max<std::int64_t>(hi, v);
      }
    }
    CHECK(lo < -bound / 2);
    CHECK(hi > bound / 2);
    std::vector<std::byte> want(50 * dtype_size(t));
    reference_reduction(d, 50, want.data());
    std::int32_t m = input_value(d, 0, 17);
    for (std::uint32_t r = 1; r < 300; ++r) m = std::min(m, input_value(d, r, 17));
    CHECK(load_element(t, want.data() + 17 * dtype_size(t)) == static_cast<float>(m));
  }
}

TEST_CASE("coll: values depend on the seed, the rank and the index", "[coll][data]") {
  const DataSpec a{DType::kF32, ReduceOp::kSum, 8, 1};
  const DataSpec b{DType::kF32, ReduceOp::kSum, 8, 2};
  CHECK(input_of(a, 3, 64) != input_of(b, 3, 64));
  CHECK(input_of(a, 3, 64) != input_of(a, 4, 64));
  CHECK(input_of(a, 3, 64) == input_of(a, 3, 64));
  std::vector<std::int32_t> row;
  for (std::uint64_t i = 0; i < 64; ++i) row.push_back(input_value(a, 3, i));
  std::sort(row.begin(), row.end());
  CHECK(std::unique(row.begin(), row.end()) - row.begin() > 40);
}

TEST_CASE("coll: expected outputs follow each collective's definition", "[coll][data]") {
  const std::uint32_t n = 3;
  const DataSpec d{DType::kF32, ReduceOp::kSum, n, 4};
  const std::uint64_t count = 6;  // blocks of 2
  const auto val = [&](std::uint32_t r, std::uint64_t i) { return static_cast<float>(input_value(d, r, i)); };
  std::vector<std::byte> out(count * 4);
  const auto at = [&](std::uint64_t e) { return load_element(DType::kF32, out.data() + e * 4); };

  expected_output(d, Collective::kAllGather, 1, count, out.data());
  CHECK(at(0) == val(0, 0));
  CHECK(at(3) == val(1, 1));
  CHECK(at(4) == val(2, 0));

  expected_output(d, Collective::kAllToAll, 1, count, out.data());
  CHECK(at(0) == val(0, 2));  // block 0 of rank 1's output = block 1 of rank 0's input
  CHECK(at(5) == val(2, 3));

  expected_output(d, Collective::kReduceScatter, 2, count, out.data());
  CHECK(at(0) == val(0, 4) + val(1, 4) + val(2, 4));
  CHECK(at(1) == val(0, 5) + val(1, 5) + val(2, 5));

  expected_output(d, Collective::kAllReduce, 0, count, out.data());
  CHECK(at(3) == val(0, 3) + val(1, 3) + val(2, 3));
}

TEST_CASE("coll: count_wrong compares bit for bit", "[coll][data]") {
  std::vector<float> a = {1.0f, 2.0f, 0.0f, 4.0f, 5.0f};
  std::vector<float> b = a;
  const auto* pa = reinterpret_cast<const std::byte*>(a.data());
  const auto* pb = reinterpret_cast<const std::byte*>(b.data());
  CHECK(count_wrong(DType::kF32, pa, pb, 5) == 0);
  b[2] = -0.0f;  // equal as a number, not as bits
  b[4] = 5.5f;
  CHECK(count_wrong(DType::kF32, pa, pb, 5) == 2);
  CHECK(count_wrong(DType::kF32, pa, pb, 4) == 1);
  CHECK(count_wrong(DType::kBF16, pa, pb, 10) == 2);  // the same bytes as 10 halves: 2 differ
}

TEST_CASE("coll: random data is not exactly summable: order changes the result", "[coll][data]") {
  const std::uint64_t count = 256;
  std::vector<std::byte> x(count * 4);
  std::vector<std::byte> y(count * 4);
  std::vector<std::byte> z(count * 4);
  fill_random(DType::kF32, 0, x.data(), count, 1);
  fill_random(DType::kF32, 1, y.data(), count, 1);
  fill_random(DType::kF32, 2, z.data(), count, 1);
  std::vector<std::byte> xy_z = x;
  reduce(DType::kF32, ReduceOp::kSum, xy_z.data(), y.data(), count);
  reduce(DType::kF32, ReduceOp::kSum, xy_z.data(), z.data(), count);
  std::vector<std::byte> zy_x = z;
  reduce(DType::kF32, ReduceOp::kSum, zy_x.data(), y.data(), count);
  reduce(DType::kF32, ReduceOp::kSum, zy_x.data(), x.data(), count);
  CHECK(count_wrong(DType::kF32, xy_z.data(), zy_x.data(), count) > 10);
}

TEST_CASE("coll: random data has zeros of both signs, so min and max depend on operand order", "[coll][data]") {
  const std::uint64_t count = 256;
  std::vector<std::byte> x(count * 4);
  std::vector<std::byte> y(count * 4);
  fill_random(DType::kF32, 0, x.data(), count, 1);
  fill_random(DType::kF32, 1, y.data(), count, 1);
  std::vector<std::byte> xy = x;
  reduce(DType::kF32, ReduceOp::kMin, xy.data(), y.data(), count);
  std::vector<std::byte> yx = y;
  reduce(DType::kF32, ReduceOp::kMin, yx.data(), x.data(), count);
  // Both x and y zero at an element (1 in 64) with different signs (half of those): a few.
  CHECK(count_wrong(DType::kF32, xy.data(), yx.data(), count) > 0);
}
