// lib/accept's private helpers: numbers as people write them, a key for an unordered pair.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include <fmt/format.h>

namespace fabench::accept::detail {

// Two decimals at most, trailing zeros dropped: 100, 97.5, 0.9, 92.15; "n/a" for NaN.
inline std::string num(double v) {
  if (std::isnan(v)) return "n/a";
  std::string s = fmt::format("{:.2f}", v);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  if (s == "-0") s = "0";
  return s;
}

// The same key for a b and b a.
inline std::uint64_t pair_key(std::uint32_t a, std::uint32_t b) {
  return (std::uint64_t{std::min(a, b)} << 32) | std::max(a, b);
}

}  // namespace fabench::accept::detail
