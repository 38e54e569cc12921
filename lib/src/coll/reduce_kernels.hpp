// The kernel tables of the reduction paths (coll/reduce.hpp). Each SIMD path is its own source
// file, compiled with that path's instruction-set flags and called only after CPUID says the CPU
// has them. Those files include nothing but this header and <immintrin.h>: an inline function
// of a shared header compiled there with AVX flags could be the copy the linker keeps for the
// whole program, and run on a CPU without AVX.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fabench::coll::kernels {

// dst[i] = dst[i] op src[i] for i < count elements.
using ReduceFn = void (*)(std::byte* dst, const std::byte* src, std::size_t count);

// [dtype][op], in the order of DType (f32, bf16, f16) and ReduceOp (sum, min, max).
struct Table {
  ReduceFn fn[3][3];
};

namespace {
// Elements before dst reaches a 64-byte boundary (at most count): the SIMD loops reduce those on
// the portable path first, so that their stores, and their loads of dst, never cross a cache
// line. (Internal linkage: each path's file has its own copy, built with its own flags.)
inline std::size_t head_to_line(const std::byte* dst, std::size_t elem_bytes, std::size_t count) {
  const auto misaligned = reinterpret_cast<std::uintptr_t>(dst) % 64;
  const std::size_t head = misaligned == 0 ? 0 : (64 - misaligned) / elem_bytes;
  return head < count ? head : count;
}
}  // namespace

// The SIMD loops leave the first head_to_line() and the last count % block elements to the
// portable path.
extern const Table kPortable;
// Defined on x86-64 builds only (FABENCH_REDUCE_X86).
extern const Table kAvx2;
extern const Table kAvx512;
extern const Table kAvx512Bf16;
extern const Table kAvx512Fp16;

}  // namespace fabench::coll::kernels
