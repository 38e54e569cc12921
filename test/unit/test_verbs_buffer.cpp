// HostBuffer: page-aligned, zero-filled, huge pages or a clear fallback,
// and move-assignment that hands the old mapping back.
#include <catch2/catch.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <utility>

#include "fabench/verbs/error.hpp"
#include "fabench/verbs/mr.hpp"

using namespace fabench::verbs;

namespace {
bool mapped(const void* p) {
  // mincore fails with ENOMEM on an address that is not mapped.
  unsigned char vec = 0;
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  void* base = reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(p) & ~(page - 1));
  return mincore(base, 1, &vec) == 0;
}
}  // namespace

TEST_CASE("HostBuffer is page-aligned and zero-filled", "[verbs][mr]") {
  HostBuffer buf(10000);
  REQUIRE(buf.data() != nullptr);
  CHECK(buf.size() == 10000);
  CHECK(reinterpret_cast<std::uintptr_t>(buf.data()) % static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE)) == 0);
  bool all_zero = true;
  for (std::byte b : buf.span()) all_zero = all_zero && b == std::byte{0};
  CHECK(all_zero);
  CHECK_FALSE(buf.huge_pages());
  CHECK_THROWS_AS(HostBuffer(0), VerbsError);
}

TEST_CASE("HostBuffer move-assignment unmaps the old buffer", "[verbs][mr]") {
  HostBuffer a(4096);
  HostBuffer b(8192);
  std::byte* old_a = a.data();
  std::byte* old_b = b.data();
  REQUIRE(mapped(old_a));
  a = std::move(b);
  CHECK(a.data() == old_b);
  CHECK(a.size() == 8192);
  CHECK(b.data() == nullptr);  // NOLINT(bugprone-use-after-move)
  CHECK_FALSE(mapped(old_a));  // released, not leaked
}

TEST_CASE("HostBuffer huge pages: kTry always works, kRequire succeeds or says how to fix it", "[verbs][mr]") {
  HostBuffer tried(3 << 20, HugePages::kTry);
  REQUIRE(tried.data() != nullptr);
  CHECK(tried.size() == (3u << 20));
  tried.data()[tried.size() - 1] = std::byte{1};  // the whole size is usable
  try {
    HostBuffer huge(1 << 20, HugePages::kRequire);
    CHECK(huge.huge_pages());
  } catch (const VerbsError& e) {
    CHECK(e.verb() == "mmap(MAP_HUGETLB)");
    CHECK_THAT(std::string(e.what()), Catch::Contains("nr_hugepages"));
  }
}
