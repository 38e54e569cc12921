// The AVX-512 reduction path (coll/reduce.hpp, kernels::kAvx512). Compiled with -mavx512f
// -mavx512bw -mavx512vl; called only when CPUID reports them and the OS saves the zmm state.
// The same operations and roundings as the AVX2 path (avx2.cpp), 512 bits at a time.
#include <immintrin.h>

#include "avx512.hpp"

namespace fabench::coll::kernels {

namespace {

// 32 bf16 at a time, interleaved with zeros into floats and packed back (in-lane inverses).
template <int kOp>
void bf16(std::byte* dst, const std::byte* src, std::size_t count) {
  const __m512i zero = _mm512_setzero_si512();
  std::size_t i = head_to_line(dst, 2, count);
  kPortable.fn[1][kOp](dst, src, i);
  for (; i + 32 <= count; i += 32) {
    const __m512i d = _mm512_loadu_si512(dst + i * 2);
    const __m512i s = _mm512_loadu_si512(src + i * 2);
    const __m512 lo = avx512::apply<kOp>(_mm512_castsi512_ps(_mm512_unpacklo_epi16(zero, d)),
                                         _mm512_castsi512_ps(_mm512_unpacklo_epi16(zero, s)));
    const __m512 hi = avx512::apply<kOp>(_mm512_castsi512_ps(_mm512_unpackhi_epi16(zero, d)),
                                         _mm512_castsi512_ps(_mm512_unpackhi_epi16(zero, s)));
    _mm512_storeu_si512(dst + i * 2, _mm512_packus_epi32(avx512::round_bf16(lo), avx512::round_bf16(hi)));
  }
  kPortable.fn[1][kOp](dst + i * 2, src + i * 2, count - i);
}

}  // namespace

const Table kAvx512 = {{
    {avx512::f32<avx512::kSum>, avx512::f32<avx512::kMin>, avx512::f32<avx512::kMax>},
    {bf16<avx512::kSum>, bf16<avx512::kMin>, bf16<avx512::kMax>},
    {avx512::f16<avx512::kSum>, avx512::f16<avx512::kMin>, avx512::f16<avx512::kMax>},
}};

}  // namespace fabench::coll::kernels
