// The AVX-512 FP16 reduction path (coll/reduce.hpp, kernels::kAvx512Fp16): the AVX-512 BF16
// path with f16 reduced in half-precision arithmetic, 32 elements per instruction. vaddph is
// correctly rounded to nearest even, which is what the portable path's float sum then rounding
// gives; FP16 arithmetic does not flush subnormals. min and max select as the portable path
// and quiet a NaN result (the portable path's conversion through float quiets it).
#include <immintrin.h>

#include "avx512.hpp"

namespace fabench::coll::kernels {

namespace {

// d + s with d as the first source (avx2.cpp says why).
inline __m512h add_ph_d_first(__m512h d, __m512h s) {
  __m512h r;
  __asm__("vaddph %2, %1, %0" : "=v"(r) : "v"(d), "v"(s));
  return r;
}

template <int kOp>
inline __m512h apply_ph(__m512h d, __m512h s) {
  if constexpr (kOp == avx512::kSum) {
    return add_ph_d_first(d, s);
  } else {
    const __mmask32 take = _mm512_cmp_ph_mask(s, d, kOp == avx512::kMin ? _CMP_LT_OQ : _CMP_GT_OQ) |
                           _mm512_cmp_ph_mask(s, s, _CMP_UNORD_Q);
    const __m512h r = _mm512_mask_blend_ph(take, d, s);
    const __mmask32 nan = _mm512_cmp_ph_mask(r, r, _CMP_UNORD_Q);
    const __m512i bits = _mm512_castph_si512(r);
    return _mm512_castsi512_ph(_mm512_mask_mov_epi16(bits, nan, _mm512_or_si512(bits, _mm512_set1_epi16(0x200))));
  }
}

template <int kOp>
void f16(std::byte* dst, const std::byte* src, std::size_t count) {
  std::size_t i = head_to_line(dst, 2, count);
  kPortable.fn[2][kOp](dst, src, i);
  for (; i + 64 <= count; i += 64) {
    std::byte* d = dst + i * 2;
    const std::byte* s = src + i * 2;
    const __m512h r0 = apply_ph<kOp>(_mm512_loadu_ph(d), _mm512_loadu_ph(s));
    const __m512h r1 = apply_ph<kOp>(_mm512_loadu_ph(d + 64), _mm512_loadu_ph(s + 64));
    _mm512_storeu_ph(d, r0);
    _mm512_storeu_ph(d + 64, r1);
  }
  kPortable.fn[2][kOp](dst + i * 2, src + i * 2, count - i);
}

}  // namespace

const Table kAvx512Fp16 = {{
    {avx512::f32<avx512::kSum>, avx512::f32<avx512::kMin>, avx512::f32<avx512::kMax>},
    {avx512::bf16_native<avx512::kSum>, avx512::bf16_native<avx512::kMin>, avx512::bf16_native<avx512::kMax>},
    {f16<avx512::kSum>, f16<avx512::kMin>, f16<avx512::kMax>},
}};

}  // namespace fabench::coll::kernels
