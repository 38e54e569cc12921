// The AVX-512 BF16 reduction path (coll/reduce.hpp, kernels::kAvx512Bf16): the AVX-512 path
// with bf16 rounded by vcvtne2ps2bf16 (32 results per instruction). That instruction rounds to
// nearest even and quiets NaN as the portable formula does, but treats subnormal inputs as zero;
// results whose exponent field is zero are rounded again by the integer formula (a rare branch).
#include <immintrin.h>

#include "avx512.hpp"

namespace fabench::coll::kernels {

const Table kAvx512Bf16 = {{
    {avx512::f32<avx512::kSum>, avx512::f32<avx512::kMin>, avx512::f32<avx512::kMax>},
    {avx512::bf16_native<avx512::kSum>, avx512::bf16_native<avx512::kMin>, avx512::bf16_native<avx512::kMax>},
    {avx512::f16<avx512::kSum>, avx512::f16<avx512::kMin>, avx512::f16<avx512::kMax>},
}};

}  // namespace fabench::coll::kernels
