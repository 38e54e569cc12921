// splitmix64: the one seeded generator of the project's draws (routing, layouts, rank shuffles,
// payload patterns). Fast, and the same sequence on every host and compiler (std::
// distributions are not), so every rank and every --plan agree without exchanging anything.
#pragma once

#include <cstdint>

namespace fabench {

// The next value of the stream whose state is `s` (advanced).
inline std::uint64_t splitmix64(std::uint64_t& s) noexcept {
  std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// A draw in [0, n) (n > 0) from the stream `s`: the high half of a 64 x 64-bit product
// (Lemire's method without the rejection step; its bias, < n / 2^64, is far below any use here).
inline std::uint64_t draw_below(std::uint64_t& s, std::uint64_t n) noexcept {
  __extension__ typedef unsigned __int128 Wide;  // GCC and Clang on 64-bit targets
  return static_cast<std::uint64_t>((static_cast<Wide>(splitmix64(s)) * n) >> 64);
}

}  // namespace fabench
