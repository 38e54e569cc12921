// Shared by the libFuzzer targets: FUZZ_CHECK, a failed oracle that libFuzzer
// records as a crash (tools/fuzz counts it), and small input helpers.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#define FUZZ_CHECK(cond)                                                                          \
  do {                                                                                            \
    if (!(cond)) {                                                                                \
      std::fprintf(stderr, "fuzz check failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
      std::abort();                                                                               \
    }                                                                                             \
  } while (0)

namespace fuzz {

inline std::span<const std::uint8_t> bytes(const std::uint8_t* data, std::size_t size) { return {data, size}; }

inline std::string text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

inline std::vector<std::uint8_t> vec(std::span<const std::uint8_t> s) { return {s.begin(), s.end()}; }

// "a\nb\n" -> {"a", "b", ""}: the lines of an argv-shaped input.
inline std::vector<std::string> lines(std::string_view s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const auto pos = s.find('\n', start);
    out.emplace_back(s.substr(start, pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return out;
}

// The input as a file, for targets whose code under test reads a path: written to one memfd
// per process (made on first use, truncated for each input); returns "/proc/self/fd/N".
inline std::string as_file(const std::uint8_t* data, std::size_t size) {
  static const int fd = ::memfd_create("fuzz-input", MFD_CLOEXEC);
  FUZZ_CHECK(fd >= 0);
  FUZZ_CHECK(::ftruncate(fd, 0) == 0);
  FUZZ_CHECK(::pwrite(fd, data, size, 0) == static_cast<ssize_t>(size));
  return "/proc/self/fd/" + std::to_string(fd);
}

}  // namespace fuzz
