// Small text helpers every layer uses.
#pragma once

#include <string>
#include <string_view>

namespace fabench {

// ASCII lower case (names, flags and config values are ASCII; the locale plays no part).
[[nodiscard]] inline std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  return out;
}

}  // namespace fabench
