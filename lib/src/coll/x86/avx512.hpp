// Pieces the AVX-512 reduction paths share (avx512.cpp, avx512bf16.cpp, avx512fp16.cpp). Only
// those files include it, each compiled with at least -mavx512f -mavx512bw -mavx512vl; it is
// all in an unnamed namespace, so no copy of it is shared with code built for another CPU.
#pragma once

#include <immintrin.h>

#include "../reduce_kernels.hpp"

namespace fabench::coll::kernels {
namespace {
namespace avx512 {

enum Op { kSum, kMin, kMax };

// d + s with d as the first source (avx2.cpp says why).
inline __m512 add_d_first(__m512 d, __m512 s) {
  __m512 r;
  __asm__("vaddps %2, %1, %0" : "=v"(r) : "v"(d), "v"(s));
  return r;
}

// min and max as the portable path: src when it compares below (above) dst or is NaN, else dst.
template <int kOp>
inline __m512 apply(__m512 d, __m512 s) {
  if constexpr (kOp == kSum) {
    return add_d_first(d, s);
  } else {
    const __mmask16 take = _mm512_cmp_ps_mask(s, d, kOp == kMin ? _CMP_LT_OQ : _CMP_GT_OQ) |
                           _mm512_cmp_ps_mask(s, s, _CMP_UNORD_Q);
    return _mm512_mask_blend_ps(take, d, s);
  }
}

template <int kOp>
void f32(std::byte* dst, const std::byte* src, std::size_t count) {
  auto* d = reinterpret_cast<float*>(dst);
  const auto* s = reinterpret_cast<const float*>(src);
  std::size_t i = head_to_line(dst, 4, count);
  kPortable.fn[0][kOp](dst, src, i);
  for (; i + 32 <= count; i += 32) {
    const __m512 r0 = apply<kOp>(_mm512_loadu_ps(d + i), _mm512_loadu_ps(s + i));
    const __m512 r1 = apply<kOp>(_mm512_loadu_ps(d + i + 16), _mm512_loadu_ps(s + i + 16));
    _mm512_storeu_ps(d + i, r0);
    _mm512_storeu_ps(d + i + 16, r1);
  }
  kPortable.fn[0][kOp](dst + i * 4, src + i * 4, count - i);
}

// float -> bf16 bits in the low half of each 32-bit lane, as the portable formula.
inline __m512i round_bf16(__m512 x) {
  const __m512i xi = _mm512_castps_si512(x);
  const __m512i high = _mm512_srli_epi32(xi, 16);
  const __m512i lsb = _mm512_and_si512(high, _mm512_set1_epi32(1));
  const __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(xi, _mm512_set1_epi32(0x7fff)), lsb), 16);
  const __mmask16 nan = _mm512_cmpgt_epi32_mask(_mm512_and_si512(xi, _mm512_set1_epi32(0x7fffffff)),
                                                _mm512_set1_epi32(0x7f800000));
  return _mm512_mask_or_epi32(rounded, nan, high, _mm512_set1_epi32(0x40));
}

// 32 f16 at a time through the hardware conversions (vcvtps2ph rounds to nearest even).
template <int kOp>
void f16(std::byte* dst, const std::byte* src, std::size_t count) {
  std::size_t i = head_to_line(dst, 2, count);
  kPortable.fn[2][kOp](dst, src, i);
  for (; i + 32 <= count; i += 32) {
    auto* dp = reinterpret_cast<__m256i*>(dst + i * 2);
    const auto* sp = reinterpret_cast<const __m256i*>(src + i * 2);
    const __m512 r0 = apply<kOp>(_mm512_cvtph_ps(_mm256_loadu_si256(dp)), _mm512_cvtph_ps(_mm256_loadu_si256(sp)));
    const __m512 r1 = apply<kOp>(_mm512_cvtph_ps(_mm256_loadu_si256(dp + 1)),
                                 _mm512_cvtph_ps(_mm256_loadu_si256(sp + 1)));
    _mm256_storeu_si256(dp, _mm512_cvtps_ph(r0, _MM_FROUND_TO_NEAREST_INT));
    _mm256_storeu_si256(dp + 1, _mm512_cvtps_ph(r1, _MM_FROUND_TO_NEAREST_INT));
  }
  kPortable.fn[2][kOp](dst + i * 2, src + i * 2, count - i);
}

#ifdef __AVX512BF16__
// The bf16 kernel of the AVX-512 BF16 path (avx512bf16.cpp says why the fix-up).
// 16 bf16 at dst/src -> 16 floats in order (each bits << 16).
inline __m512 widen(const std::byte* p) {
  return _mm512_castsi512_ps(
      _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))), 16));
}

template <int kOp>
void bf16_native(std::byte* dst, const std::byte* src, std::size_t count) {
  const __m512i exponent = _mm512_set1_epi32(0x7f800000);
  const __m512i significand = _mm512_set1_epi32(0x007fffff);
  std::size_t i = head_to_line(dst, 2, count);
  kPortable.fn[1][kOp](dst, src, i);
  for (; i + 32 <= count; i += 32) {
    std::byte* d = dst + i * 2;
    const std::byte* s = src + i * 2;
    const __m512 lo = apply<kOp>(widen(d), widen(s));
    const __m512 hi = apply<kOp>(widen(d + 32), widen(s + 32));
    // lo -> elements 0..15, hi -> 16..31; __m512bh is a vector of 16-bit integers.
    __m512i out = (__m512i)_mm512_cvtne2ps_pbh(hi, lo);
    const __mmask16 sub_lo = _mm512_testn_epi32_mask(_mm512_castps_si512(lo), exponent) &
                             _mm512_test_epi32_mask(_mm512_castps_si512(lo), significand);
    const __mmask16 sub_hi = _mm512_testn_epi32_mask(_mm512_castps_si512(hi), exponent) &
                             _mm512_test_epi32_mask(_mm512_castps_si512(hi), significand);
    if ((sub_lo | sub_hi) != 0) [[unlikely]] {
      const __m256i exact_lo = _mm512_cvtepi32_epi16(round_bf16(lo));
      const __m256i exact_hi = _mm512_cvtepi32_epi16(round_bf16(hi));
      const __m512i exact = _mm512_inserti64x4(_mm512_castsi256_si512(exact_lo), exact_hi, 1);
      const auto mask = static_cast<__mmask32>(sub_lo | (static_cast<unsigned>(sub_hi) << 16));
      out = _mm512_mask_blend_epi16(mask, out, exact);
    }
    _mm512_storeu_si512(d, out);
  }
  kPortable.fn[1][kOp](dst + i * 2, src + i * 2, count - i);
}

#endif

}  // namespace avx512
}  // namespace
}  // namespace fabench::coll::kernels
