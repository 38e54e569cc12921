// splitmix64: lib/ep's generator for routing draws and payload patterns (fast, and the same
// sequence on every host and compiler, so ranks and --plan agree).
#pragma once

#include <cstdint>

namespace fabench::ep::detail {

inline std::uint64_t mix(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace fabench::ep::detail
