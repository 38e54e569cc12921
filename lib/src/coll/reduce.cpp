#include "fabench/coll/reduce.hpp"

#include <array>
#include <bit>
#include <cstring>
#include <type_traits>

#include "reduce_kernels.hpp"

namespace fabench::coll {

namespace {

struct DTypeInfo {
  DType value;
  std::string_view name;
  std::uint32_t size;
};
constexpr std::array<DTypeInfo, 3> kDTypes = {{
    {DType::kF32, "f32", 4},
    {DType::kBF16, "bf16", 2},
    {DType::kF16, "f16", 2},
}};

struct OpName {
  ReduceOp value;
  std::string_view name;
};
constexpr std::array<OpName, 3> kOps = {{{ReduceOp::kSum, "sum"}, {ReduceOp::kMin, "min"}, {ReduceOp::kMax, "max"}}};

// The conversions are straight-line code: select() is arithmetic, not a branch, which GCC's
// vectoriser needs (it leaves a chain of ?: on integers as control flow).
inline std::uint32_t select(bool c, std::uint32_t if_true, std::uint32_t if_false) {
  const std::uint32_t mask = 0u - static_cast<std::uint32_t>(c);
  return (if_true & mask) | (if_false & ~mask);
}

inline float bf16_bits_to_float(std::uint16_t h) { return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16); }

inline std::uint16_t float_to_bf16_bits(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  // Round to nearest even on the 16 dropped bits; a carry out of the significand bumps the
  // exponent, which is right, up to and including rounding the largest finite values to inf.
  const std::uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
  const std::uint32_t quiet_nan = (x >> 16) | 0x40u;
  return static_cast<std::uint16_t>(select((x & 0x7fffffffu) > 0x7f800000u, quiet_nan, rounded));
}

inline float f16_bits_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  const std::uint32_t man = h & 0x3ffu;
  const std::uint32_t normal = ((exp + 112u) << 23) | (man << 13);  // rebias 15 -> 127
  const std::uint32_t special = 0x7f800000u | (man << 13);          // inf, NaN
  // Subnormal (and zero): man x 2^-24, exact in float.
  const std::uint32_t sub = std::bit_cast<std::uint32_t>(static_cast<float>(static_cast<std::int32_t>(man)) * 0x1p-24f);
  const std::uint32_t mag = select(exp == 0, sub, select(exp == 0x1fu, special, normal));
  return std::bit_cast<float>(sign | mag);
}

inline std::uint16_t float_to_f16_bits(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t ax = x & 0x7fffffffu;
  // Normal results: rebias 127 -> 15 and round to nearest even on the 13 dropped bits.
  const std::uint32_t rebiased = ax - 0x38000000u;
  const std::uint32_t normal = (rebiased + 0xfffu + ((rebiased >> 13) & 1u)) >> 13;
  // Below 2^-14 the result is a multiple of 2^-24: adding 0.5 (whose ulp is 2^-24) rounds |f| to
  // one, to nearest even, and the low bits of the sum are that multiple (1024 = smallest normal).
  const std::uint32_t sub = std::bit_cast<std::uint32_t>(std::bit_cast<float>(ax) + 0.5f) - 0x3f000000u;
  const std::uint32_t nan = 0x7e00u | ((ax >> 13) & 0x3ffu);
  std::uint32_t mag = select(ax < 0x38800000u, sub, normal);
  mag = select(ax >= 0x477ff000u, 0x7c00u, mag);  // from 65520 (halfway past 65504) up, and inf
  mag = select(ax > 0x7f800000u, nan, mag);
  return static_cast<std::uint16_t>(sign | mag);
}

struct Sum {
  float operator()(float d, float s) const { return d + s; }
};
// When both operands are NaN, x86 returns the first one of an addition, quieted, and compilers
// commute d + s as they like (GCC and clang put different operands first in the vectorised
// blocks, GCC another in the scalar tail). The rule every path keeps: a NaN dst is the result
// (quieted), else a NaN src (quieted by d + s); the SIMD paths add with dst as the first source
// (x86/avx2.cpp). Sum is the fast loop for blocks whose dst holds no NaN (dst_has_nan() looks
// first, in integer lanes, at a few percent of the block's cost); SumDstFirst, a select the
// vectoriser keeps, does the rest. test_coll_reduce_paths.cpp holds every path to the same bits.
struct SumDstFirst {
  float operator()(float d, float s) const {
    const std::uint32_t quiet_d = std::bit_cast<std::uint32_t>(d) | 0x00400000u;
    return std::bit_cast<float>(select(d != d, quiet_d, std::bit_cast<std::uint32_t>(d + s)));
  }
};

// s != s: NaN in src wins; NaN in dst fails both comparisons and is kept. `|`, not `||`: no
// short-circuit branch, so the loop stays vectorisable.
struct Min {
  float operator()(float d, float s) const { return ((s < d) | (s != s)) ? s : d; }
};
struct Max {
  float operator()(float d, float s) const { return ((s > d) | (s != s)) ? s : d; }
};

struct F32 {
  using Bits = float;
  static float to_float(float v) { return v; }
  static float from_float(float v) { return v; }
};
struct BF16 {
  using Bits = std::uint16_t;
  static constexpr std::uint32_t kInfBits = 0x7f80u;
  static float to_float(std::uint16_t v) { return bf16_bits_to_float(v); }
  static std::uint16_t from_float(float v) { return float_to_bf16_bits(v); }
};
struct F16 {
  using Bits = std::uint16_t;
  static constexpr std::uint32_t kInfBits = 0x7c00u;
  static float to_float(std::uint16_t v) { return f16_bits_to_float(v); }
  static std::uint16_t from_float(float v) { return float_to_f16_bits(v); }
};

// A block of constant length over non-aliasing (__restrict) typed pointers: GCC's -O2 vectorises
// a loop only when it needs neither an alias check nor a scalar epilogue (the "very cheap" cost
// model), and this one needs neither. The tail goes one element at a time.
constexpr std::size_t kBlock = 32;

// Whether any of the block's kBlock dst elements (bf16, f16) is NaN: |x| + (the largest finite
// value's distance to the first NaN, minus one) carries into the sign bit exactly for NaN; on
// GCC/clang generic vectors of eight halves (SSE2 on x86-64, NEON on aarch64, scalar code
// elsewhere), OR-ed together, one test for the block.
using U16x8 = std::uint16_t __attribute__((vector_size(16)));

template <class T>
bool dst_has_nan(const std::uint16_t* __restrict d) {
  static_assert(sizeof(typename T::Bits) == 2 && kBlock % 8 == 0);
  constexpr std::uint16_t kToNan = static_cast<std::uint16_t>(0x7fffu - T::kInfBits);  // |inf| + this = 0x7fff
  U16x8 any{};
#pragma GCC unroll 8
  for (std::size_t k = 0; k < kBlock / 8; ++k) {
    U16x8 v;
    std::memcpy(&v, d + 8 * k, sizeof v);
    any |= (v & 0x7fff) + kToNan;
  }
  std::uint64_t half[2];
  std::memcpy(half, &any, sizeof half);
  return ((half[0] | half[1]) & 0x8000800080008000ull) != 0;
}

template <class T, class Op>
void reduce_block(typename T::Bits* __restrict d, const typename T::Bits* __restrict s, Op op) {
  if constexpr (std::is_same_v<Op, Sum>) {  // f16 only: f32 and bf16 sums run sum_f32(), sum_bf16()
    if (dst_has_nan<T>(d)) [[unlikely]] {
      for (std::size_t j = 0; j < kBlock; ++j) {
        d[j] = T::from_float(SumDstFirst{}(T::to_float(d[j]), T::to_float(s[j])));
      }
      return;
    }
  }
  for (std::size_t j = 0; j < kBlock; ++j) d[j] = T::from_float(op(T::to_float(d[j]), T::to_float(s[j])));
}

// The tail, one element at a time: sums with the explicit rule.
template <class Op>
struct TailOp {
  using type = Op;
};
template <>
struct TailOp<Sum> {
  using type = SumDstFirst;
};

template <class T, class Op>
void reduce_loop(std::byte* dst, const std::byte* src, std::size_t count, Op op) {
  using Bits = typename T::Bits;
  // The buffers are byte arrays of element-aligned data (schedule offsets are multiples of the
  // element size); reading them as the element type is what every reduction kernel does.
  auto* d = reinterpret_cast<Bits*>(dst);
  const auto* s = reinterpret_cast<const Bits*>(src);
  std::size_t i = 0;
  for (; i + kBlock <= count; i += kBlock) reduce_block<T>(d + i, s + i, op);
  const typename TailOp<Op>::type tail{};
  for (; i < count; ++i) d[i] = T::from_float(tail(T::to_float(d[i]), T::to_float(s[i])));
}

// The f32 and bf16 sums on generic vectors, written out because the vectoriser's code for them
// was slow: for f32, two loops over each block (dst_has_nan(), then the sum) at 0.6-0.7x of a
// plain sum; for bf16, the truncation to 16 bits as a chain of unpacks. Each block's dst is
// checked for NaN first (f32: loaded once into registers, x != x); a block with a NaN dst goes
// the SumDstFirst way, element by element. The lanes compute what the scalar conversions above
// compute (bench/compare/portable_ab.sh measures them against the scalar loops of before). f16
// stays on reduce_loop(): written the same way its conversions ran at half the vectoriser's speed.
using F32x4 = float __attribute__((vector_size(16)));
using I32x4 = std::int32_t __attribute__((vector_size(16)));
using U32x4 = std::uint32_t __attribute__((vector_size(16)));

[[gnu::always_inline]] inline bool any_lane(I32x4 v) {
  std::uint64_t half[2];
  std::memcpy(half, &v, sizeof half);
  return (half[0] | half[1]) != 0;
}
// Lanewise select on a compare's mask (all ones or zero).
[[gnu::always_inline]] inline U32x4 pick(I32x4 mask, U32x4 if_true, U32x4 if_false) {
  return if_false ^ ((if_true ^ if_false) & (U32x4)mask);
}

template <class T>
void scalar_sum(typename T::Bits* d, const typename T::Bits* s, std::size_t n) {
  for (std::size_t j = 0; j < n; ++j) d[j] = T::from_float(SumDstFirst{}(T::to_float(d[j]), T::to_float(s[j])));
}

void sum_f32(std::byte* dst, const std::byte* src, std::size_t count) {
  constexpr std::size_t kVecs = kBlock / 4;
  auto* d = reinterpret_cast<float*>(dst);
  const auto* s = reinterpret_cast<const float*>(src);
  std::size_t i = 0;
  for (; i + kBlock <= count; i += kBlock) {
    F32x4 dv[kVecs];
    I32x4 nan{};
#pragma GCC unroll 8
    for (std::size_t k = 0; k < kVecs; ++k) {
      std::memcpy(&dv[k], d + i + 4 * k, sizeof dv[k]);
      nan |= dv[k] != dv[k];
    }
    if (any_lane(nan)) [[unlikely]] {
      scalar_sum<F32>(d + i, s + i, kBlock);
      continue;
    }
#pragma GCC unroll 8
    for (std::size_t k = 0; k < kVecs; ++k) {
      F32x4 sv;
      std::memcpy(&sv, s + i + 4 * k, sizeof sv);
      dv[k] += sv;
      std::memcpy(d + i + 4 * k, &dv[k], sizeof dv[k]);
    }
  }
  scalar_sum<F32>(d + i, s + i, count - i);
}

// Eight bf16 to two vectors of four floats (the low and the high four lanes): each half in the
// upper 16 bits of its lane.
[[gnu::always_inline]] inline void widen_bf16(U16x8 h, F32x4& lo, F32x4& hi) {
  const U16x8 z{};
  lo = (F32x4)__builtin_shufflevector(z, h, 0, 8, 1, 9, 2, 10, 3, 11);
  hi = (F32x4)__builtin_shufflevector(z, h, 4, 12, 5, 13, 6, 14, 7, 15);
}
// float_to_bf16_bits() lanewise, the result in the upper half of each lane.
[[gnu::always_inline]] inline U32x4 round_bf16(F32x4 f) {
  const U32x4 x = (U32x4)f;
  const U32x4 rounded = x + 0x7fffu + ((x >> 16) & 1u);
  return pick((I32x4)(x & 0x7fffffffu) > 0x7f800000, x | 0x00400000u, rounded);
}

void sum_bf16(std::byte* dst, const std::byte* src, std::size_t count) {
  auto* d = reinterpret_cast<std::uint16_t*>(dst);
  const auto* s = reinterpret_cast<const std::uint16_t*>(src);
  std::size_t i = 0;
  for (; i + kBlock <= count; i += kBlock) {
    if (dst_has_nan<BF16>(d + i)) [[unlikely]] {
      scalar_sum<BF16>(d + i, s + i, kBlock);
      continue;
    }
    for (std::size_t k = i; k < i + kBlock; k += 8) {
      U16x8 dv, sv;
      std::memcpy(&dv, d + k, sizeof dv);
      std::memcpy(&sv, s + k, sizeof sv);
      F32x4 dlo, dhi, slo, shi;
      widen_bf16(dv, dlo, dhi);
      widen_bf16(sv, slo, shi);
      const U16x8 r = __builtin_shufflevector((U16x8)round_bf16(dlo + slo), (U16x8)round_bf16(dhi + shi), 1, 3, 5, 7, 9,
                                              11, 13, 15);
      std::memcpy(d + k, &r, sizeof r);
    }
  }
  scalar_sum<BF16>(d + i, s + i, count - i);
}

// sum_bf16's shuffles take a lane's upper 16 bits as its odd half: little-endian layouts only.
template <class T, class Op>
void portable(std::byte* dst, const std::byte* src, std::size_t count) {
  if constexpr (std::is_same_v<T, F32> && std::is_same_v<Op, Sum>) {
    sum_f32(dst, src, count);
  } else if constexpr (std::is_same_v<T, BF16> && std::is_same_v<Op, Sum> &&
                       std::endian::native == std::endian::little) {
    sum_bf16(dst, src, count);
  } else {
    reduce_loop<T>(dst, src, count, Op{});
  }
}

}  // namespace

namespace kernels {
// Constant-initialised (function addresses only), so the SIMD paths' tails may use it from
// any static initialiser.
const Table kPortable = {{
    {portable<F32, Sum>, portable<F32, Min>, portable<F32, Max>},
    {portable<BF16, Sum>, portable<BF16, Min>, portable<BF16, Max>},
    {portable<F16, Sum>, portable<F16, Min>, portable<F16, Max>},
}};
}  // namespace kernels

std::optional<DType> parse_dtype(std::string_view name) {
  for (const auto& t : kDTypes) {
    if (t.name == name) return t.value;
  }
  // The other spelling of the shared flag vocabulary (docs/cli.md).
  if (name == "fp32") return DType::kF32;
  if (name == "fp16") return DType::kF16;
  return std::nullopt;
}

std::string_view dtype_name(DType t) {
  for (const auto& i : kDTypes) {
    if (i.value == t) return i.name;
  }
  return "?";
}

std::uint32_t dtype_size(DType t) {
  for (const auto& i : kDTypes) {
    if (i.value == t) return i.size;
  }
  return 0;
}

std::optional<ReduceOp> parse_reduce_op(std::string_view name) {
  for (const auto& o : kOps) {
    if (o.name == name) return o.value;
  }
  return std::nullopt;
}

std::string_view reduce_op_name(ReduceOp op) {
  for (const auto& o : kOps) {
    if (o.value == op) return o.name;
  }
  return "?";
}

float bf16_to_float(std::uint16_t h) { return bf16_bits_to_float(h); }
std::uint16_t float_to_bf16(float f) { return float_to_bf16_bits(f); }
float f16_to_float(std::uint16_t h) { return f16_bits_to_float(h); }
std::uint16_t float_to_f16(float f) { return float_to_f16_bits(f); }

float load_element(DType t, const std::byte* p) {
  if (t == DType::kF32) {
    float v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  std::uint16_t h;
  std::memcpy(&h, p, sizeof h);
  return t == DType::kBF16 ? bf16_bits_to_float(h) : f16_bits_to_float(h);
}

void store_element(DType t, std::byte* p, float v) {
  if (t == DType::kF32) {
    std::memcpy(p, &v, sizeof v);
    return;
  }
  const std::uint16_t h = t == DType::kBF16 ? float_to_bf16_bits(v) : float_to_f16_bits(v);
  std::memcpy(p, &h, sizeof h);
}

}  // namespace fabench::coll
