// Reduction kernels and half-precision conversions against an independent reference: the exact
// result in double, rounded to the type with frexp/ldexp/nearbyint (not the bit tricks under
// test). Conversions are checked exhaustively, including every tie between adjacent values.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "fabench/coll/reduce.hpp"

using namespace fabench::coll;

namespace {

struct Format {
  int digits;  // significand bits, implicit bit included
  int emin;    // exponent of the smallest normal
  int emax;    // exponent of the largest finite
};
constexpr Format kF32{24, -126, 127};
constexpr Format kBF16{8, -126, 127};
constexpr Format kF16{11, -14, 15};

Format format_of(DType t) { return t == DType::kF32 ? kF32 : (t == DType::kBF16 ? kBF16 : kF16); }

// x rounded to nearest, ties to even, in format f (with subnormals and overflow to infinity).
double round_to(double x, Format f) {
  if (std::isnan(x) || std::isinf(x) || x == 0.0) return x;
  int e = 0;
  std::frexp(std::fabs(x), &e);  // |x| in [2^(e-1), 2^e)
  const int quantum = std::max(e - 1, f.emin) - (f.digits - 1);
  const double y = std::ldexp(std::nearbyint(std::ldexp(x, -quantum)), quantum);
  const double max_finite = std::ldexp(2.0 - std::ldexp(1.0, 1 - f.digits), f.emax);
  return std::fabs(y) > max_finite ? std::copysign(INFINITY, x) : y;
}

// The value of a half-precision bit pattern, decoded by the textbook formula.
double decode_f16(std::uint16_t h) {
  const int sign = h >> 15;
  const int exp = (h >> 10) & 0x1f;
  const int man = h & 0x3ff;
  double v = 0;
  if (exp == 0x1f) {
    v = man != 0 ? std::numeric_limits<double>::quiet_NaN() : INFINITY;
  } else if (exp == 0) {
    v = std::ldexp(man, -24);
  } else {
    v = std::ldexp(1024 + man, exp - 25);
  }
  return sign != 0 ? -v : v;
}

std::vector<std::byte> encode(DType t, const std::vector<std::uint32_t>& bits) {
  const std::uint32_t size = dtype_size(t);
  std::vector<std::byte> out(bits.size() * size);
  for (std::size_t i = 0; i < bits.size(); ++i) {
    if (size == 4) {
      std::memcpy(out.data() + i * 4, &bits[i], 4);
    } else {
      const auto h = static_cast<std::uint16_t>(bits[i]);
      std::memcpy(out.data() + i * 2, &h, 2);
    }
  }
  return out;
}

std::uint32_t bits_at(DType t, const std::vector<std::byte>& buf, std::size_t i) {
  if (t == DType::kF32) {
    std::uint32_t v = 0;
    std::memcpy(&v, buf.data() + i * 4, 4);
    return v;
  }
  std::uint16_t h = 0;
  std::memcpy(&h, buf.data() + i * 2, 2);
  return h;
}

// What dst op src must be, per the header: exact then rounded; NaN from either side; on equal
// operands min and max keep dst (which decides between +0 and -0).
bool reference_matches(DType t, ReduceOp op, std::uint32_t dst_bits, std::uint32_t src_bits, std::uint32_t got_bits) {
  std::vector<std::byte> one = encode(t, {dst_bits, src_bits, got_bits});
  const double d = load_element(t, one.data());
  const double s = load_element(t, one.data() + dtype_size(t));
  const double got = load_element(t, one.data() + 2 * dtype_size(t));
  if (std::isnan(d) || std::isnan(s)) return std::isnan(got);
  double want = 0;
  switch (op) {
    case ReduceOp::kSum: want = round_to(d + s, format_of(t)); break;
    case ReduceOp::kMin:
      if (d == s) return got_bits == dst_bits;
      want = std::min(d, s);
      break;
    case ReduceOp::kMax:
      if (d == s) return got_bits == dst_bits;
      want = std::max(d, s);
      break;
  }
  if (std::isnan(want)) return std::isnan(got);
  return got == want && std::signbit(got) == std::signbit(want);
}

// Operand pairs that exercise rounding: b near a's exponent, plus fully random patterns.
std::vector<std::uint32_t> random_patterns(DType t, std::size_t n, std::mt19937& rng) {
  std::vector<std::uint32_t> v(n);
  const std::uint32_t width = dtype_size(t) * 8;
  const std::uint32_t mask = width == 32 ? 0xffffffffu : 0xffffu;
  const std::uint32_t man_bits = t == DType::kF32 ? 23 : (t == DType::kBF16 ? 7 : 10);
  for (std::size_t i = 0; i < n; i += 2) {
    const std::uint32_t a = rng() & mask;
    v[i] = a;
    if (i + 1 == n) break;
    const std::int32_t shift = static_cast<std::int32_t>(rng() % 25) - 12;  // exponent offset
    std::uint32_t b = (a + (static_cast<std::uint32_t>(shift) << man_bits)) & mask;
    b ^= rng() & ((1u << man_bits) - 1);
    if (rng() % 2) b ^= 1u << (width - 1);
    v[i + 1] = rng() % 8 == 0 ? rng() & mask : b;
  }
  return v;
}

}  // namespace

TEST_CASE("coll: dtype and reduction names and sizes", "[coll][reduce]") {
  CHECK(parse_dtype("f32") == DType::kF32);
  CHECK(parse_dtype("bf16") == DType::kBF16);
  CHECK(parse_dtype("f16") == DType::kF16);
  CHECK(parse_dtype("fp16") == DType::kF16);  // the shared vocabulary's other spelling
  CHECK(parse_dtype("fp32") == DType::kF32);
  CHECK(parse_dtype("fp8") == std::nullopt);
  CHECK(dtype_name(DType::kBF16) == "bf16");
  CHECK(dtype_size(DType::kF32) == 4);
  CHECK(dtype_size(DType::kBF16) == 2);
  CHECK(dtype_size(DType::kF16) == 2);
  CHECK(parse_reduce_op("max") == ReduceOp::kMax);
  CHECK(parse_reduce_op("avg") == std::nullopt);
  CHECK(reduce_op_name(ReduceOp::kMin) == "min");
}

TEST_CASE("coll: every bf16 and f16 value converts to float and back unchanged", "[coll][reduce]") {
  for (std::uint32_t h = 0; h <= 0xffff; ++h) {
    const auto b = static_cast<std::uint16_t>(h);
    const std::uint32_t sign = h & 0x8000u;
    const float fb = bf16_to_float(b);
    REQUIRE(std::bit_cast<std::uint32_t>(fb) == h << 16);
    if (std::isnan(fb)) {  // NaN stays NaN, quieted, sign kept
      CHECK((float_to_bf16(fb) & 0x7fc0u) == 0x7fc0u);
      CHECK((float_to_bf16(fb) & 0x8000u) == sign);
    } else {
      REQUIRE(float_to_bf16(fb) == b);
    }
    const float fh = f16_to_float(b);
    const double want = decode_f16(b);
    if (std::isnan(want)) {
      REQUIRE(std::isnan(fh));
      CHECK((float_to_f16(fh) & 0x7e00u) == 0x7e00u);
      CHECK((float_to_f16(fh) & 0x8000u) == sign);
    } else {
      REQUIRE(static_cast<double>(fh) == want);
      REQUIRE(std::signbit(fh) == (sign != 0));
      REQUIRE(float_to_f16(fh) == b);
    }
  }
}

TEST_CASE("coll: float to bf16 and f16 rounds every tie to even and every near-tie to nearest", "[coll][reduce]") {
  // Midpoints of adjacent values are exact in float (one more significand bit than the type).
  for (std::uint16_t h = 0; h < 0x7f7f; ++h) {  // bf16: up to the largest finite
    const double lo = bf16_to_float(h);
    const double hi = bf16_to_float(static_cast<std::uint16_t>(h + 1));
    const auto mid = static_cast<float>((lo + hi) / 2);
    REQUIRE(static_cast<double>(mid) == (lo + hi) / 2);
    const std::uint16_t even = (h & 1) == 0 ? h : static_cast<std::uint16_t>(h + 1);
    REQUIRE(float_to_bf16(mid) == even);
    REQUIRE(float_to_bf16(-mid) == (even | 0x8000));
    REQUIRE(float_to_bf16(std::nextafter(mid, 0.0f)) == h);
    REQUIRE(float_to_bf16(std::nextafter(mid, INFINITY)) == h + 1);
  }
  for (std::uint16_t h = 0; h < 0x7bff; ++h) {  // f16: up to 65504
    const double lo = f16_to_float(h);
    const double hi = f16_to_float(static_cast<std::uint16_t>(h + 1));
    const auto mid = static_cast<float>((lo + hi) / 2);
    REQUIRE(static_cast<double>(mid) == (lo + hi) / 2);
    const std::uint16_t even = (h & 1) == 0 ? h : static_cast<std::uint16_t>(h + 1);
    REQUIRE(float_to_f16(mid) == even);
    REQUIRE(float_to_f16(-mid) == (even | 0x8000));
    REQUIRE(float_to_f16(std::nextafter(mid, 0.0f)) == h);
    REQUIRE(float_to_f16(std::nextafter(mid, INFINITY)) == h + 1);
  }
  // Past the largest finite value: halfway (and above) is infinity, below it is the maximum.
  CHECK(float_to_f16(65520.0f) == 0x7c00);
  CHECK(float_to_f16(std::nextafter(65520.0f, 0.0f)) == 0x7bff);
  CHECK(float_to_f16(1e30f) == 0x7c00);
  CHECK(float_to_f16(-INFINITY) == 0xfc00);
  CHECK(float_to_bf16(std::numeric_limits<float>::max()) == 0x7f80);
  CHECK(float_to_bf16(-INFINITY) == 0xff80);
  // Underflow: half the smallest subnormal rounds to (signed) zero, anything above it up.
  CHECK(float_to_f16(0x1p-25f) == 0x0000);
  CHECK(float_to_f16(-0x1p-25f) == 0x8000);
  CHECK(float_to_f16(std::nextafter(0x1p-25f, 1.0f)) == 0x0001);
  CHECK(float_to_f16(0x1p-30f) == 0x0000);
  CHECK(float_to_f16(0x1.8p-24f) == 0x0002);  // 1.5 x 2^-24: tie, to even (2)
  CHECK(float_to_f16(std::numeric_limits<float>::denorm_min()) == 0x0000);
  CHECK(float_to_bf16(std::numeric_limits<float>::denorm_min()) == 0x0000);
  CHECK(float_to_bf16(3 * std::numeric_limits<float>::denorm_min()) == 0x0000);  // far below 2^-134
}

TEST_CASE("coll: float to bf16 and f16 matches the reference on a million random floats", "[coll][reduce]") {
  std::mt19937 rng(42);
  for (int i = 0; i < 1'000'000; ++i) {
    // Exponents concentrated where f16 is interesting, and anywhere at all.
    std::uint32_t bits = rng();
    if (i % 2 == 0) bits = (bits & 0x807fffffu) | ((95u + rng() % 50u) << 23);
    const float f = std::bit_cast<float>(bits);
    if (std::isnan(f)) continue;
    const double want_h = round_to(f, kF16);
    const double got_h = f16_to_float(float_to_f16(f));
    const double want_b = round_to(f, kBF16);
    const double got_b = bf16_to_float(float_to_bf16(f));
    if (got_h != want_h || got_b != want_b || std::signbit(got_h) != std::signbit(f)) {
      FAIL("float " << f << " (0x" << std::hex << bits << "): f16 " << got_h << " want " << want_h << ", bf16 " << got_b
                    << " want " << want_b);
    }
  }
}

TEST_CASE("coll: reduce matches the double reference for every type and op, any length, on every path",
          "[coll][reduce]") {
  for (const ReducePath path : available_reduce_paths()) {
    std::mt19937 rng(1234);
    for (DType t : {DType::kF32, DType::kBF16, DType::kF16}) {
      for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax}) {
        for (std::size_t n : {0, 1, 31, 32, 33, 95, 1000, 20000}) {
          const auto d_bits = random_patterns(t, n, rng);
          auto s_bits = random_patterns(t, n, rng);
          // Pair each dst with a nearby src half of the time (the generator pairs within a vector).
          for (std::size_t i = 0; i + 1 < n; i += 4) s_bits[i] = d_bits[i + 1];
          std::vector<std::byte> dst = encode(t, d_bits);
          const std::vector<std::byte> src = encode(t, s_bits);
          reduce_on(path, t, op, dst.data(), src.data(), n);
          std::size_t bad = 0;
          for (std::size_t i = 0; i < n; ++i) {
            if (!reference_matches(t, op, d_bits[i], s_bits[i], bits_at(t, dst, i))) {
              if (bad++ == 0) {
                UNSCOPED_INFO(reduce_path_name(path)
                              << " " << dtype_name(t) << " " << reduce_op_name(op) << " n=" << n << " i=" << i << ": 0x"
                              << std::hex << d_bits[i] << " op 0x" << s_bits[i] << " gave 0x" << bits_at(t, dst, i));
              }
            }
          }
          CHECK(bad == 0);
        }
      }
    }
  }
}

TEST_CASE("coll: reduce on named cases: ties, subnormals, overflow, NaN, signed zero", "[coll][reduce]") {
  const auto one = [](DType t, ReduceOp op, std::uint32_t d, std::uint32_t s) {
    std::vector<std::byte> dst = encode(t, {d});
    const std::vector<std::byte> src = encode(t, {s});
    reduce(t, op, dst.data(), src.data(), 1);
    return bits_at(t, dst, 0);
  };
  using enum ReduceOp;
  // bf16: 1 + 2^-8 is a tie between 1 (even) and 1 + 2^-7; (1 + 2^-7) + 2^-8 ties up to even.
  CHECK(one(DType::kBF16, kSum, 0x3f80, 0x3b80) == 0x3f80);
  CHECK(one(DType::kBF16, kSum, 0x3f81, 0x3b80) == 0x3f82);
  CHECK(one(DType::kBF16, kSum, 0x7f7f, 0x7f7f) == 0x7f80);  // max + max = inf
  CHECK(one(DType::kBF16, kSum, 0x0001, 0x0001) == 0x0002);  // subnormals add exactly
  // f16: 65504 + 16 = 65520, a tie with odd 65504 below: infinity. 65504 + 8 stays.
  CHECK(one(DType::kF16, kSum, 0x7bff, 0x4c00) == 0x7c00);
  CHECK(one(DType::kF16, kSum, 0x7bff, 0x4800) == 0x7bff);
  CHECK(one(DType::kF16, kSum, 0x0001, 0x0001) == 0x0002);
  CHECK(one(DType::kF16, kSum, 0x0400, 0x8001) == 0x03ff);              // smallest normal - smallest subnormal
  CHECK(one(DType::kF16, kSum, 0x3c00, 0x1000) == 0x3c00);              // 1 + 2^-11: tie, stays at 1
  CHECK(one(DType::kF16, kSum, 0x8000, 0x8000) == 0x8000);              // -0 + -0 = -0
  CHECK(one(DType::kF16, kSum, 0x0000, 0x8000) == 0x0000);              // +0 + -0 = +0
  CHECK(one(DType::kF32, kSum, 0x3f800000, 0x33800000) == 0x3f800000);  // 1 + 2^-24: tie to even
  CHECK(one(DType::kF32, kSum, 0x3f800001, 0x33800000) == 0x3f800002);
  // NaN from either side, for every op; inf - inf is NaN.
  for (ReduceOp op : {kSum, kMin, kMax}) {
    CHECK((one(DType::kF16, op, 0x3c00, 0x7e00) & 0x7e00) == 0x7e00);
    CHECK((one(DType::kF16, op, 0x7e00, 0x3c00) & 0x7e00) == 0x7e00);
    CHECK((one(DType::kBF16, op, 0x3f80, 0x7fc0) & 0x7fc0) == 0x7fc0);
    CHECK(std::isnan(std::bit_cast<float>(one(DType::kF32, op, 0x7fc00000, 0x3f800000))));
  }
  CHECK((one(DType::kF16, kSum, 0x7c00, 0xfc00) & 0x7e00) == 0x7e00);
  CHECK(one(DType::kF16, kMin, 0x7c00, 0xfc00) == 0xfc00);
  CHECK(one(DType::kBF16, kMax, 0xc000, 0x4000) == 0x4000);
  // min/max of +0 and -0 keep dst.
  CHECK(one(DType::kF32, kMin, 0x00000000, 0x80000000) == 0x00000000);
  CHECK(one(DType::kF32, kMax, 0x80000000, 0x00000000) == 0x80000000);
}

TEST_CASE("coll: reduce only touches count elements", "[coll][reduce]") {
  std::vector<std::byte> dst = encode(DType::kF16, std::vector<std::uint32_t>(70, 0x3c00));  // 1.0
  const std::vector<std::byte> src = encode(DType::kF16, std::vector<std::uint32_t>(70, 0x3c00));
  reduce(DType::kF16, ReduceOp::kSum, dst.data(), src.data(), 67);
  CHECK(bits_at(DType::kF16, dst, 0) == 0x4000);
  CHECK(bits_at(DType::kF16, dst, 66) == 0x4000);
  CHECK(bits_at(DType::kF16, dst, 67) == 0x3c00);
  CHECK(bits_at(DType::kF16, dst, 69) == 0x3c00);
}
