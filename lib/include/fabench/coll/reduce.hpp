// Reduction kernels (dst = dst op src) for the collectives' element types, and the bf16/f16
// conversions they use.
//
// bf16 and f16 are computed in float and rounded back to nearest, ties to even. One float
// operation then one rounding is the correctly rounded half-precision result: float's 24-bit
// significand is at least 2p + 2 bits for p = 8 (bf16) and p = 11 (f16), where double
// rounding is known to be harmless. Overflow rounds to infinity, underflow to subnormals or
// signed zero; NaN stays NaN (quieted, sign and top payload bits kept): for sum, a NaN dst is
// the result, else a NaN src.
// min and max propagate NaN from either operand; between equal operands (+0 and -0 included)
// they keep dst. The f16 subnormal rounding relies on the default floating-point environment
// (round to nearest); fabench never changes it and is not built with -ffast-math.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace fabench::coll {

enum class DType : std::uint8_t { kF32, kBF16, kF16 };
// CLI names f32, bf16, f16 (fp32 and fp16 accepted as well).
[[nodiscard]] std::optional<DType> parse_dtype(std::string_view name);
[[nodiscard]] std::string_view dtype_name(DType t);
[[nodiscard]] std::uint32_t dtype_size(DType t);

enum class ReduceOp : std::uint8_t { kSum, kMin, kMax };
// CLI names sum, min, max.
[[nodiscard]] std::optional<ReduceOp> parse_reduce_op(std::string_view name);
[[nodiscard]] std::string_view reduce_op_name(ReduceOp op);

// The implementations of reduce(), chosen at run time by what the CPU has (docs/design/reductions.md).
// Every path gives bit-identical results to kPortable on every input (test_coll_reduce_paths.cpp):
//   kPortable    plain loops in fixed-size blocks, vectorised by the compiler for the build's
//                baseline (SSE2 on x86-64); what every architecture compiles
//   kAvx2        AVX2 + F16C: f16 through the hardware conversions, bf16 by integer rounding
//   kAvx512      AVX-512F/BW: as kAvx2 at twice the width
//   kAvx512Bf16  kAvx512, bf16 rounded by AVX-512 BF16's vcvtne2ps2bf16 (subnormals fixed up)
//   kAvx512Fp16  kAvx512Bf16, f16 sum/min/max in AVX-512 FP16 arithmetic (FABENCH_REDUCE_PATH only)
enum class ReducePath : std::uint8_t { kPortable, kAvx2, kAvx512, kAvx512Bf16, kAvx512Fp16 };
inline constexpr std::size_t kReducePathCount = 5;
[[nodiscard]] std::string_view reduce_path_name(ReducePath p);
[[nodiscard]] std::optional<ReducePath> parse_reduce_path(std::string_view name);
// What this build compiled and this CPU (CPUID, and the OS's saved register state) can run.
[[nodiscard]] bool reduce_path_available(ReducePath p);
// The paths available here, portable first, best last.
[[nodiscard]] std::vector<ReducePath> available_reduce_paths();
// The best available path reduce() takes by default: kAvx512Fp16 only when asked for (its
// kernels are tested wherever the CPU has AVX-512 FP16, and none of this project's hosts has it yet).
[[nodiscard]] ReducePath default_reduce_path();
// The path reduce() uses: default_reduce_path(), unless FABENCH_REDUCE_PATH names another (an
// unavailable or unknown name falls back to the default and is reported by reduce_path_note()).
[[nodiscard]] ReducePath active_reduce_path();
// Why FABENCH_REDUCE_PATH was not honoured ("" when it was or is unset).
[[nodiscard]] std::string_view reduce_path_note();

// dst[i] = dst[i] op src[i] for i < count elements of type t, on active_reduce_path(). dst and
// src must not overlap and must be aligned to the element size (schedule offsets are multiples
// of it).
void reduce(DType t, ReduceOp op, std::byte* dst, const std::byte* src, std::size_t count);
// The same on a given path (which must be available).
void reduce_on(ReducePath path, DType t, ReduceOp op, std::byte* dst, const std::byte* src, std::size_t count);

// Bit patterns of the half-precision types (IEEE binary16; bfloat16 = the top half of a float).
[[nodiscard]] float bf16_to_float(std::uint16_t h);
[[nodiscard]] std::uint16_t float_to_bf16(float f);
[[nodiscard]] float f16_to_float(std::uint16_t h);
[[nodiscard]] std::uint16_t float_to_f16(float f);

// One element of type t at p, as float (exact for all three types), and back (rounded as above).
[[nodiscard]] float load_element(DType t, const std::byte* p);
void store_element(DType t, std::byte* p, float v);

}  // namespace fabench::coll
