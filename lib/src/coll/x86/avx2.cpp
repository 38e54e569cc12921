// The AVX2 + F16C reduction path (coll/reduce.hpp, kernels::kAvx2). Compiled with -mavx2 -mf16c;
// called only when CPUID reports both. Bit-identical to the portable path: the same float
// operation, then the same rounding (F16C's vcvtps2ph rounds to nearest even, as the portable
// f16 conversion does; bf16 is rounded by the portable path's integer formula).
#include <immintrin.h>

#include "../reduce_kernels.hpp"

namespace fabench::coll::kernels {

namespace {

enum Op { kSum, kMin, kMax };

// d + s with d as the first source: when both are NaN, x86 returns the first source quieted
// (as the portable d + s does), and a compiler free to commute the addition could put s there.
inline __m256 add_d_first(__m256 d, __m256 s) {
  __m256 r;
  __asm__("vaddps %2, %1, %0" : "=x"(r) : "x"(d), "x"(s));
  return r;
}

// min and max as the portable path: src when it compares below (above) dst or is NaN, else dst.
template <int kOp>
inline __m256 apply(__m256 d, __m256 s) {
  if constexpr (kOp == kSum) {
    return add_d_first(d, s);
  } else {
    const __m256 below = _mm256_cmp_ps(s, d, kOp == kMin ? _CMP_LT_OQ : _CMP_GT_OQ);
    return _mm256_blendv_ps(d, s, _mm256_or_ps(below, _mm256_cmp_ps(s, s, _CMP_UNORD_Q)));
  }
}

template <int kOp>
void f32(std::byte* dst, const std::byte* src, std::size_t count) {
  auto* d = reinterpret_cast<float*>(dst);
  const auto* s = reinterpret_cast<const float*>(src);
  std::size_t i = head_to_line(dst, 4, count);
  kPortable.fn[0][kOp](dst, src, i);
  for (; i + 16 <= count; i += 16) {
    const __m256 r0 = apply<kOp>(_mm256_loadu_ps(d + i), _mm256_loadu_ps(s + i));
    const __m256 r1 = apply<kOp>(_mm256_loadu_ps(d + i + 8), _mm256_loadu_ps(s + i + 8));
    _mm256_storeu_ps(d + i, r0);
    _mm256_storeu_ps(d + i + 8, r1);
  }
  kPortable.fn[0][kOp](dst + i * 4, src + i * 4, count - i);
}

// float -> bf16 bits in the low half of each 32-bit lane: round to nearest even on the 16
// dropped bits; NaN quieted with its sign and top payload kept.
inline __m256i round_bf16(__m256 x) {
  const __m256i xi = _mm256_castps_si256(x);
  const __m256i high = _mm256_srli_epi32(xi, 16);
  const __m256i lsb = _mm256_and_si256(high, _mm256_set1_epi32(1));
  const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(xi, _mm256_set1_epi32(0x7fff)), lsb), 16);
  const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(xi, _mm256_set1_epi32(0x7fffffff)),
                                         _mm256_set1_epi32(0x7f800000));
  return _mm256_blendv_epi8(rounded, _mm256_or_si256(high, _mm256_set1_epi32(0x40)), nan);
}

// 16 bf16 at a time: interleaving with zeros makes each a float (its bits << 16); the pack
// after the operation is the exact inverse of that interleave (both work within 128-bit lanes).
template <int kOp>
void bf16(std::byte* dst, const std::byte* src, std::size_t count) {
  const __m256i zero = _mm256_setzero_si256();
  std::size_t i = head_to_line(dst, 2, count);
  kPortable.fn[1][kOp](dst, src, i);
  for (; i + 16 <= count; i += 16) {
    auto* dp = reinterpret_cast<__m256i*>(dst + i * 2);
    const __m256i d = _mm256_loadu_si256(dp);
    const __m256i s = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i * 2));
    const __m256 lo = apply<kOp>(_mm256_castsi256_ps(_mm256_unpacklo_epi16(zero, d)),
                                 _mm256_castsi256_ps(_mm256_unpacklo_epi16(zero, s)));
    const __m256 hi = apply<kOp>(_mm256_castsi256_ps(_mm256_unpackhi_epi16(zero, d)),
                                 _mm256_castsi256_ps(_mm256_unpackhi_epi16(zero, s)));
    _mm256_storeu_si256(dp, _mm256_packus_epi32(round_bf16(lo), round_bf16(hi)));
  }
  kPortable.fn[1][kOp](dst + i * 2, src + i * 2, count - i);
}

template <int kOp>
void f16(std::byte* dst, const std::byte* src, std::size_t count) {
  std::size_t i = head_to_line(dst, 2, count);
  kPortable.fn[2][kOp](dst, src, i);
  for (; i + 16 <= count; i += 16) {
    auto* dp = reinterpret_cast<__m128i*>(dst + i * 2);
    const auto* sp = reinterpret_cast<const __m128i*>(src + i * 2);
    const __m256 r0 = apply<kOp>(_mm256_cvtph_ps(_mm_loadu_si128(dp)), _mm256_cvtph_ps(_mm_loadu_si128(sp)));
    const __m256 r1 = apply<kOp>(_mm256_cvtph_ps(_mm_loadu_si128(dp + 1)), _mm256_cvtph_ps(_mm_loadu_si128(sp + 1)));
    _mm_storeu_si128(dp, _mm256_cvtps_ph(r0, _MM_FROUND_TO_NEAREST_INT));
    _mm_storeu_si128(dp + 1, _mm256_cvtps_ph(r1, _MM_FROUND_TO_NEAREST_INT));
  }
  kPortable.fn[2][kOp](dst + i * 2, src + i * 2, count - i);
}

}  // namespace

const Table kAvx2 = {{
    {f32<kSum>, f32<kMin>, f32<kMax>},
    {bf16<kSum>, bf16<kMin>, bf16<kMax>},
    {f16<kSum>, f16<kMin>, f16<kMax>},
}};

}  // namespace fabench::coll::kernels
