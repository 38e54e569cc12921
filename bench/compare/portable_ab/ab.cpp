// portable_ab.sh's driver: REV's portable reduce() (namespace fabench_old) against this checkout's
// portable path, 40 alternating 8 MiB sums per dtype; time ratio new/old (above 1: faster).
#include "fabench/coll/reduce.hpp"
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>
namespace fabench_old::coll { enum class DType : std::uint8_t { kF32, kBF16, kF16 }; enum class ReduceOp : std::uint8_t { kSum, kMin, kMax };
void reduce(DType t, ReduceOp op, std::byte* dst, const std::byte* src, std::size_t count); }
using namespace fabench::coll;
int main() {
  const std::size_t bytes = 8 << 20;
  std::vector<std::byte> d(bytes), s(bytes);
  for (std::size_t i = 0; i + 4 <= bytes; i += 4) { unsigned v = 0x3f803c00u ^ (i * 2654435761u & 0x007f007f); std::memcpy(&d[i], &v, 4); std::memcpy(&s[i], &v, 4); }
  for (int t = 0; t < 3; ++t) {
    double o = 0, n = 0;
    for (int r = 0; r < 40; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      fabench_old::coll::reduce(static_cast<fabench_old::coll::DType>(t), fabench_old::coll::ReduceOp::kSum, d.data(), s.data(), bytes / dtype_size(static_cast<DType>(t)));
      auto t1 = std::chrono::steady_clock::now();
      reduce_on(ReducePath::kPortable, static_cast<DType>(t), ReduceOp::kSum, d.data(), s.data(), bytes / dtype_size(static_cast<DType>(t)));
      auto t2 = std::chrono::steady_clock::now();
      o += std::chrono::duration<double>(t1 - t0).count(); n += std::chrono::duration<double>(t2 - t1).count();
    }
    std::printf("%s sum: old %.2f GB/s, new portable %.2f GB/s, new/old %.3f\n", std::string(dtype_name(static_cast<DType>(t))).c_str(), 40.0*bytes/o/1e9, 40.0*bytes/n/1e9, o/n);
  }
}
