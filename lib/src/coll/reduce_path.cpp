// The reduction paths of coll/reduce.hpp: what the CPU can run (CPUID and XGETBV), the choice
// made once per process (FABENCH_REDUCE_PATH may override it), and reduce() through the chosen
// table. The kernels: reduce.cpp (portable) and x86/ (one file per SIMD path).
#include <array>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#if defined(FABENCH_REDUCE_X86)
#include <cpuid.h>
#endif

#include "fabench/base/error.hpp"
#include "fabench/coll/reduce.hpp"
#include "reduce_kernels.hpp"

namespace fabench::coll {

namespace {

// CPUID (and XGETBV: the OS must save the registers a path uses), read once.
struct CpuFeatures {
  bool avx2_f16c = false;
  bool avx512 = false;  // F, BW and VL
  bool avx512_bf16 = false;
  bool avx512_fp16 = false;
};

CpuFeatures detect_cpu() {
  CpuFeatures f;
#if defined(FABENCH_REDUCE_X86)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(1, &a, &b, &c, &d) == 0) return f;
  const bool osxsave = (c & (1U << 27)) != 0;
  const bool avx = (c & (1U << 28)) != 0;
  const bool f16c = (c & (1U << 29)) != 0;
  if (!osxsave || !avx) return f;
  unsigned xcr0_lo = 0, xcr0_hi = 0;
  __asm__("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  const bool ymm_saved = (xcr0_lo & 0x6U) == 0x6U;    // SSE and AVX state
  const bool zmm_saved = (xcr0_lo & 0xe6U) == 0xe6U;  // and opmask, ZMM_Hi256, Hi16_ZMM
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d) == 0) return f;
  const unsigned max_subleaf = a;
  const bool avx2 = (b & (1U << 5)) != 0;
  const bool avx512f = (b & (1U << 16)) != 0;
  const bool avx512bw = (b & (1U << 30)) != 0;
  const bool avx512vl = (b & (1U << 31)) != 0;
  const bool fp16 = (d & (1U << 23)) != 0;
  bool bf16 = false;
  if (max_subleaf >= 1 && __get_cpuid_count(7, 1, &a, &b, &c, &d) != 0) bf16 = (a & (1U << 5)) != 0;
  f.avx2_f16c = ymm_saved && avx2 && f16c;
  f.avx512 = f.avx2_f16c && zmm_saved && avx512f && avx512bw && avx512vl;
  f.avx512_bf16 = f.avx512 && bf16;
  f.avx512_fp16 = f.avx512_bf16 && fp16;
#endif
  return f;
}

const CpuFeatures& cpu() {
  static const CpuFeatures f = detect_cpu();
  return f;
}

constexpr std::array<std::string_view, kReducePathCount> kPathNames = {"portable", "avx2", "avx512", "avx512bf16",
                                                                       "avx512fp16"};

const kernels::Table& table_of(ReducePath p) {
#if defined(FABENCH_REDUCE_X86)
  switch (p) {
    case ReducePath::kPortable: return kernels::kPortable;
    case ReducePath::kAvx2: return kernels::kAvx2;
    case ReducePath::kAvx512: return kernels::kAvx512;
    case ReducePath::kAvx512Bf16: return kernels::kAvx512Bf16;
    case ReducePath::kAvx512Fp16: return kernels::kAvx512Fp16;
  }
#endif
  (void)p;
  return kernels::kPortable;
}

struct Active {
  ReducePath path = ReducePath::kPortable;
  const kernels::Table* table = &kernels::kPortable;
  std::string note;
};

Active choose() {
  Active a;
  a.path = default_reduce_path();
  if (const char* env = std::getenv("FABENCH_REDUCE_PATH"); env != nullptr && *env != '\0') {
    const auto want = parse_reduce_path(env);
    if (!want) {
      a.note = fmt::format("FABENCH_REDUCE_PATH={}: unknown path (portable, avx2, avx512, avx512bf16, avx512fp16)",
                           env);
    } else if (!reduce_path_available(*want)) {
      a.note = fmt::format("FABENCH_REDUCE_PATH={}: this CPU or build cannot run it", env);
    } else {
      a.path = *want;
    }
  }
  a.table = &table_of(a.path);
  return a;
}

const Active& active() {
  static const Active a = choose();
  return a;
}

}  // namespace

std::string_view reduce_path_name(ReducePath p) { return kPathNames.at(static_cast<std::size_t>(p)); }

std::optional<ReducePath> parse_reduce_path(std::string_view name) {
  for (std::size_t i = 0; i < kPathNames.size(); ++i) {
    if (kPathNames[i] == name) return static_cast<ReducePath>(i);
  }
  return std::nullopt;
}

bool reduce_path_available(ReducePath p) {
  switch (p) {
    case ReducePath::kPortable: return true;
    case ReducePath::kAvx2: return cpu().avx2_f16c;
    case ReducePath::kAvx512: return cpu().avx512;
    case ReducePath::kAvx512Bf16: return cpu().avx512_bf16;
    case ReducePath::kAvx512Fp16: return cpu().avx512_fp16;
  }
  return false;
}

std::vector<ReducePath> available_reduce_paths() {
  std::vector<ReducePath> out;
  for (std::size_t i = 0; i < kReducePathCount; ++i) {
    if (reduce_path_available(static_cast<ReducePath>(i))) out.push_back(static_cast<ReducePath>(i));
  }
  return out;
}

ReducePath default_reduce_path() {
  // The FP16 path runs only when asked for: no CPU this project is tested on has AVX-512 FP16
  // yet, so its kernels have not been checked against the portable path on hardware.
  ReducePath best = ReducePath::kPortable;
  for (const auto p : available_reduce_paths()) {
    if (p != ReducePath::kAvx512Fp16) best = p;
  }
  return best;
}

ReducePath active_reduce_path() { return active().path; }
std::string_view reduce_path_note() { return active().note; }

void reduce(DType t, ReduceOp op, std::byte* dst, const std::byte* src, std::size_t count) {
  active().table->fn[static_cast<std::size_t>(t)][static_cast<std::size_t>(op)](dst, src, count);
}

void reduce_on(ReducePath path, DType t, ReduceOp op, std::byte* dst, const std::byte* src, std::size_t count) {
  if (!reduce_path_available(path)) {
    throw UserError(fmt::format("reduction path {} is not available here", reduce_path_name(path)));
  }
  table_of(path).fn[static_cast<std::size_t>(t)][static_cast<std::size_t>(op)](dst, src, count);
}

}  // namespace fabench::coll
