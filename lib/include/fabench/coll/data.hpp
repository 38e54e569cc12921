// Test data for collectives: inputs whose results are exact in every element type, so an output
// can be checked bit for bit whatever order the algorithm reduced in, and the expected outputs.
//
// Every input element is a small integer. For sum, at most P = floor(L / vmax) ranks contribute
// a non-zero value (1..vmax) to any one element, so every partial sum, in any order, is an
// integer of at most L, which the type holds exactly: L = 2^8 for bf16 (vmax 3), 2^11 for f16
// (vmax 15), 2^24 for f32 (vmax 255). With n <= P all ranks contribute; above it, rank r
// contributes to element i when (r + h(i)) % q == 0, q = ceil(n / P) (bf16 at 1024 ranks: q = 13,
// at most 79 contributors per element). min and max are exact for any magnitude, so for them every
// rank contributes an integer within +-256 (bf16), +-2048 (f16) or +-2^20 (f32).
// Values depend on (seed, rank, element index) only.
#pragma once

#include <cstddef>
#include <cstdint>

#include "fabench/coll/reduce.hpp"
#include "fabench/coll/schedule.hpp"

namespace fabench::coll {

struct DataSpec {
  DType dtype = DType::kF32;
  ReduceOp op = ReduceOp::kSum;
  std::uint32_t nranks = 1;
  std::uint64_t seed = 0;
};

// Element i of rank's input, as the integer it encodes.
[[nodiscard]] std::int32_t input_value(const DataSpec& d, std::uint32_t rank, std::uint64_t i);
// rank's input: elements 0..count-1.
void fill_input(const DataSpec& d, std::uint32_t rank, std::byte* buf, std::uint64_t count);
// The reduction (d.op) over all ranks of input element i, for i < count: O(nranks x count).
void reference_reduction(const DataSpec& d, std::uint64_t count, std::byte* out);
// What rank's output must be for collective c over `count` elements (the effective count, see
// effective_count): output_bytes of buffer_bytes(c, count, ...). Reductions cost O(nranks x
// count); a caller checking every rank should compute reference_reduction once and slice it.
void expected_output(const DataSpec& d, Collective c, std::uint32_t rank, std::uint64_t count, std::byte* out);

// Elements of type t that differ bit for bit between got and expected.
[[nodiscard]] std::uint64_t count_wrong(DType t, const std::byte* got, const std::byte* expected, std::uint64_t count);

// Inputs whose sums are NOT exact (random signs and significands, magnitudes within [2^-7, 1),
// one element in eight +0 or -0): for checking that every rank ends with bitwise the same result
// however rounding falls, and whichever zero min or max keeps.
void fill_random(DType t, std::uint32_t rank, std::byte* buf, std::uint64_t count, std::uint64_t seed);

}  // namespace fabench::coll
