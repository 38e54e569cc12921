// The reduction paths (coll/reduce.hpp): each one the test host can run gives bit-identical
// results to the portable path on every input: all 2^16 values of bf16 and f16 against a set of
// operands (every class of special value, NaN payloads, signed zeros, subnormals, values next to
// overflow), in both operand positions, for sum, min and max; f32 on special and random values;
// every length around the vector blocks, from every start within a cache line; every path,
// portable included, keeps the sums' NaN rule. And the dispatch offers exactly what the CPU has.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "fabench/coll/reduce.hpp"

using namespace fabench::coll;

namespace {

constexpr DType kTypes[] = {DType::kF32, DType::kBF16, DType::kF16};
constexpr ReduceOp kOps[] = {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax};

std::vector<ReducePath> simd_paths() {
  std::vector<ReducePath> out;
  for (const auto p : available_reduce_paths()) {
    if (p != ReducePath::kPortable) out.push_back(p);
  }
  return out;
}

// Operands for the halves: zeros, ones, subnormals (smallest, largest, some between), the
// smallest normals, the largest finite values, infinities, quiet and signalling NaNs with
// payloads, both signs, and a few ordinary values.
std::vector<std::uint16_t> half_operands(DType t) {
  std::vector<std::uint16_t> v;
  const bool bf = t == DType::kBF16;
  const std::uint16_t one = bf ? 0x3f80 : 0x3c00;
  const std::uint16_t max_finite = bf ? 0x7f7f : 0x7bff;
  const std::uint16_t min_normal = bf ? 0x0080 : 0x0400;
  const std::uint16_t inf = bf ? 0x7f80 : 0x7c00;
  const std::uint16_t qnan = bf ? 0x7fc0 : 0x7e00;
  const std::uint16_t snan = bf ? 0x7f81 : 0x7c01;
  for (const std::uint16_t m : std::initializer_list<std::uint16_t>{0x0000,
                                                                    0x0001,
                                                                    0x0002,
                                                                    0x0003,
                                                                    static_cast<std::uint16_t>(min_normal - 1),
                                                                    min_normal,
                                                                    static_cast<std::uint16_t>(min_normal + 1),
                                                                    one,
                                                                    static_cast<std::uint16_t>(one + 1),
                                                                    static_cast<std::uint16_t>(one - 1),
                                                                    static_cast<std::uint16_t>(max_finite - 1),
                                                                    max_finite,
                                                                    inf,
                                                                    qnan,
                                                                    static_cast<std::uint16_t>(qnan + 0x15),
                                                                    snan,
                                                                    static_cast<std::uint16_t>(snan + 0x2a),
                                                                    static_cast<std::uint16_t>(inf - 0x100),
                                                                    0x1234,
                                                                    0x2c01,
                                                                    0x5a5a}) {
    v.push_back(m);
    v.push_back(static_cast<std::uint16_t>(m | 0x8000));
  }
  return v;
}

std::vector<std::uint32_t> f32_values(std::size_t n, std::mt19937& rng) {
  const std::uint32_t specials[] = {0x00000000, 0x80000000, 0x00000001, 0x007fffff, 0x00800000, 0x3f800000,
                                    0x3f800001, 0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000, 0x7fc00000,
                                    0x7fc12345, 0xffc00001, 0x7f800001, 0xff812345, 0x33800000, 0xb3800000};
  std::vector<std::uint32_t> v(n);
  for (auto& x : v) {
    const std::uint32_t r = rng();
    x = r % 4 == 0 ? specials[rng() % std::size(specials)] : (r % 4 == 1 ? (rng() & 0x807fffffu) | 0x3f800000u : rng());
  }
  return v;
}

template <class T>
std::vector<std::byte> bytes_of(const std::vector<T>& v) {
  std::vector<std::byte> out(v.size() * sizeof(T));
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

// The first element at which two results differ, as a message; "" when identical.
std::string first_difference(const std::vector<std::byte>& want, const std::vector<std::byte>& got, std::size_t elem,
                             const std::vector<std::byte>& dst, const std::vector<std::byte>& src) {
  if (want == got) return "";
  for (std::size_t i = 0; i < want.size(); i += elem) {
    if (std::memcmp(want.data() + i, got.data() + i, elem) == 0) continue;
    std::uint32_t w = 0, g = 0, d = 0, s = 0;
    std::memcpy(&w, want.data() + i, elem);
    std::memcpy(&g, got.data() + i, elem);
    std::memcpy(&d, dst.data() + i, elem);
    std::memcpy(&s, src.data() + i, elem);
    std::ostringstream o;
    o << std::hex << "element " << std::dec << i / elem << std::hex << ": 0x" << d << " op 0x" << s << ": portable 0x"
      << w << ", path 0x" << g;
    return o.str();
  }
  return "";
}

// dst op src on `path` and on the portable path; the message of the first difference.
std::string compare_paths(ReducePath path, DType t, ReduceOp op, const std::vector<std::byte>& dst,
                          const std::vector<std::byte>& src, std::size_t count, std::size_t offset_elems = 0) {
  const std::size_t elem = dtype_size(t);
  std::vector<std::byte> want = dst;
  std::vector<std::byte> got = dst;
  reduce_on(ReducePath::kPortable, t, op, want.data() + offset_elems * elem, src.data() + offset_elems * elem, count);
  reduce_on(path, t, op, got.data() + offset_elems * elem, src.data() + offset_elems * elem, count);
  return first_difference(want, got, elem, dst, src);
}

#if defined(__x86_64__)
// The x86 flags of /proc/cpuinfo's first CPU, as the kernel names them.
std::set<std::string> cpuinfo_flags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    std::set<std::string> out;
    for (std::string w; words >> w;) out.insert(w);
    return out;
  }
  return {};
}
#endif

}  // namespace

TEST_CASE("coll: reduction path names", "[coll][reduce]") {
  for (std::size_t i = 0; i < kReducePathCount; ++i) {
    const auto p = static_cast<ReducePath>(i);
    CHECK(parse_reduce_path(reduce_path_name(p)) == p);
  }
  CHECK(parse_reduce_path("sse9") == std::nullopt);
  CHECK(available_reduce_paths().front() == ReducePath::kPortable);
  CHECK(reduce_path_available(ReducePath::kPortable));
  CHECK(reduce_path_available(active_reduce_path()));
}

TEST_CASE("coll: the reduction paths offered are what /proc/cpuinfo says the CPU has", "[coll][reduce]") {
#if !defined(__x86_64__)
  std::cout << "SKIPPED: x86-64 only" << std::endl;
#else
  const auto flags = cpuinfo_flags();
  REQUIRE(!flags.empty());
  const bool avx2 = flags.count("avx2") != 0 && flags.count("f16c") != 0;
  const bool avx512 = avx2 && flags.count("avx512f") != 0 && flags.count("avx512bw") != 0 &&
                      flags.count("avx512vl") != 0;
  const bool bf16 = avx512 && flags.count("avx512_bf16") != 0;
  const bool fp16 = bf16 && flags.count("avx512_fp16") != 0;
  CHECK(reduce_path_available(ReducePath::kAvx2) == avx2);
  CHECK(reduce_path_available(ReducePath::kAvx512) == avx512);
  CHECK(reduce_path_available(ReducePath::kAvx512Bf16) == bf16);
  CHECK(reduce_path_available(ReducePath::kAvx512Fp16) == fp16);
  // With FABENCH_REDUCE_PATH unset, reduce() runs the best of them (the FP16 path on request only).
  const ReducePath best = bf16 ? ReducePath::kAvx512Bf16
                               : (avx512 ? ReducePath::kAvx512 : (avx2 ? ReducePath::kAvx2 : ReducePath::kPortable));
  CHECK(default_reduce_path() == best);
  if (std::getenv("FABENCH_REDUCE_PATH") == nullptr) CHECK(active_reduce_path() == best);
  UNSCOPED_INFO("paths here: " << available_reduce_paths().size() << ", active "
                               << reduce_path_name(active_reduce_path()));
#endif
}

TEST_CASE("coll: every half value against every special operand, on every path, as the portable path",
          "[coll][reduce]") {
  const auto paths = simd_paths();
  if (paths.empty()) {
    std::cout << "SKIPPED: this CPU has no SIMD reduction path" << std::endl;
    return;
  }
  std::vector<std::uint16_t> all(0x10000);
  for (std::uint32_t h = 0; h <= 0xffff; ++h) all[h] = static_cast<std::uint16_t>(h);
  const auto every = bytes_of(all);
  for (const auto path : paths) {
    for (const auto t : {DType::kBF16, DType::kF16}) {
      for (const auto op : kOps) {
        for (const std::uint16_t operand : half_operands(t)) {
          const auto same = bytes_of(std::vector<std::uint16_t>(all.size(), operand));
          // operand as src (dst runs through every value) and as dst.
          const std::string a = compare_paths(path, t, op, every, same, all.size());
          const std::string b = compare_paths(path, t, op, same, every, all.size());
          if (!a.empty() || !b.empty()) {
            FAIL(reduce_path_name(path) << " " << dtype_name(t) << " " << reduce_op_name(op) << ": " << a << b);
          }
        }
      }
    }
  }
}

TEST_CASE("coll: f32 special and random values on every path, as the portable path", "[coll][reduce]") {
  const auto paths = simd_paths();
  if (paths.empty()) {
    std::cout << "SKIPPED: this CPU has no SIMD reduction path" << std::endl;
    return;
  }
  std::mt19937 rng(7);
  const auto d = f32_values(1 << 16, rng);
  const auto s = f32_values(1 << 16, rng);
  for (const auto path : paths) {
    for (const auto op : kOps) {
      const std::string diff = compare_paths(path, DType::kF32, op, bytes_of(d), bytes_of(s), d.size());
      if (!diff.empty()) FAIL(reduce_path_name(path) << " f32 " << reduce_op_name(op) << ": " << diff);
    }
  }
}

TEST_CASE("coll: every path handles every length and start around its blocks", "[coll][reduce]") {
  const auto paths = simd_paths();
  if (paths.empty()) {
    std::cout << "SKIPPED: this CPU has no SIMD reduction path" << std::endl;
    return;
  }
  std::mt19937 rng(11);
  const auto d32 = bytes_of(f32_values(300, rng));
  const auto s32 = bytes_of(f32_values(300, rng));
  std::vector<std::uint16_t> dh(300), sh(300);
  for (auto& x : dh) x = static_cast<std::uint16_t>(rng());
  for (auto& x : sh) x = static_cast<std::uint16_t>(rng());
  const auto d16 = bytes_of(dh);
  const auto s16 = bytes_of(sh);
  for (const auto path : paths) {
    for (const auto t : kTypes) {
      for (const auto op : kOps) {
        for (std::size_t offset = 0; offset < 17; ++offset) {  // every head before a 64-byte line
          for (std::size_t n = 0; n + offset <= 200; ++n) {
            const bool f32 = t == DType::kF32;
            const std::string diff = compare_paths(path, t, op, f32 ? d32 : d16, f32 ? s32 : s16, n, offset);
            if (!diff.empty()) {
              FAIL(reduce_path_name(path) << " " << dtype_name(t) << " " << reduce_op_name(op) << " n=" << n
                                          << " offset=" << offset << ": " << diff);
            }
          }
        }
      }
    }
  }
}

TEST_CASE("coll: sums keep the NaN rule on every path, portable included: a NaN dst, quieted, else a NaN src",
          "[coll][reduce]") {
  // One NaN pair at every position of 200 elements (vector blocks, their boundaries, the tail),
  // and at every start within a cache line; dst's and src's payloads differ.
  struct Case {
    DType t;
    std::uint32_t dst_nan, src_nan, finite, quiet;  // quiet: the quiet bit of the type
  };
  const Case cases[] = {{DType::kF32, 0x7f812345u, 0xffc00abcu, 0x3f800000u, 0x00400000u},
                        {DType::kBF16, 0x7f85u, 0xffc3u, 0x3f80u, 0x0040u},
                        {DType::kF16, 0x7c15u, 0xfe07u, 0x3c00u, 0x0200u}};
  for (const auto path : available_reduce_paths()) {
    std::string first;  // the first element that breaks the rule on this path
    std::size_t checked = 0;
    for (const auto& c : cases) {
      const std::size_t elem = dtype_size(c.t);
      for (std::size_t offset = 0; offset < 64 / elem; offset += 3) {
        for (std::size_t at = 0; at < 200; ++at) {
          for (const bool both : {true, false}) {
            std::vector<std::byte> d((offset + 200) * elem), s(d.size());
            for (std::size_t i = 0; i < offset + 200; ++i) {
              std::memcpy(&d[i * elem], &c.finite, elem);
              std::memcpy(&s[i * elem], &c.finite, elem);
            }
            if (both) std::memcpy(&d[(offset + at) * elem], &c.dst_nan, elem);
            std::memcpy(&s[(offset + at) * elem], &c.src_nan, elem);
            reduce_on(path, c.t, ReduceOp::kSum, d.data() + offset * elem, s.data() + offset * elem, 200);
            std::uint32_t got = 0;
            std::memcpy(&got, &d[(offset + at) * elem], elem);
            const std::uint32_t want = (both ? c.dst_nan : c.src_nan) | c.quiet;
            ++checked;
            if (got != want && first.empty()) {
              std::ostringstream o;
              o << dtype_name(c.t) << " offset " << offset << " element " << at << (both ? " (both NaN)" : " (src NaN)")
                << ": got 0x" << std::hex << got << ", want 0x" << want;
              first = o.str();
            }
          }
        }
      }
    }
    INFO(reduce_path_name(path) << ": " << first);
    CHECK(first.empty());
    CHECK(checked == 2 * 200 * (6 + 11 + 11));  // starts 0, 3, .. below 16 f32 / 32 half elements
  }
}
