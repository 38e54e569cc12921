// Reduction kernels (dst = dst op src) for the collectives' element types, and the bf16/f16
// conversions they use.
//
// bf16 and f16 are computed in float and rounded back to nearest, ties to even. One float
// operation then one rounding is the correctly rounded half-precision result: float's 24-bit
// significand is at least 2p + 2 bits for p = 8 (bf16) and p = 11 (f16), where double
// rounding is known to be harmless. Overflow rounds to infinity, underflow to subnormals or
// signed zero; NaN stays NaN (quieted, sign and top payload bits kept).
// min and max propagate NaN from either operand; between equal operands (+0 and -0 included)
// they keep dst. The f16 subnormal rounding relies on the default floating-point environment
// (round to nearest); fabench never changes it and is not built with -ffast-math.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace fabench::coll {

enum class DType : std::uint8_t { kF32, kBF16, kF16 };
// CLI names f32, bf16, f16.
[[nodiscard]] std::optional<DType> parse_dtype(std::string_view name);
[[nodiscard]] std::string_view dtype_name(DType t);
[[nodiscard]] std::uint32_t dtype_size(DType t);

enum class ReduceOp : std::uint8_t { kSum, kMin, kMax };
// CLI names sum, min, max.
[[nodiscard]] std::optional<ReduceOp> parse_reduce_op(std::string_view name);
[[nodiscard]] std::string_view reduce_op_name(ReduceOp op);

// dst[i] = dst[i] op src[i] for i < count elements of type t. dst and src must not overlap and
// must be aligned to the element size (schedule offsets are multiples of it). Plain loops in
// fixed-size blocks, which GCC vectorises at -O2 for all nine type/op pairs (SSE2 and up).
void reduce(DType t, ReduceOp op, std::byte* dst, const std::byte* src, std::size_t count);

// Bit patterns of the half-precision types (IEEE binary16; bfloat16 = the top half of a float).
[[nodiscard]] float bf16_to_float(std::uint16_t h);
[[nodiscard]] std::uint16_t float_to_bf16(float f);
[[nodiscard]] float f16_to_float(std::uint16_t h);
[[nodiscard]] std::uint16_t float_to_f16(float f);

// One element of type t at p, as float (exact for all three types), and back (rounded as above).
[[nodiscard]] float load_element(DType t, const std::byte* p);
void store_element(DType t, std::byte* p, float v);

}  // namespace fabench::coll
