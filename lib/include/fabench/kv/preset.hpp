// Model presets by name, for any shape with a `name` (kv's model shapes, ep's MoE shapes):
// the names in order, and a case-insensitive lookup whose error lists them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fabench/base/error.hpp"
#include "fabench/base/text.hpp"

namespace fabench::kv {

template <typename Shape>
[[nodiscard]] std::vector<std::string> preset_names_of(const std::vector<Shape>& presets) {
  std::vector<std::string> names;
  names.reserve(presets.size());
  for (const auto& p : presets) names.push_back(p.name);
  return names;
}

// UserError "unknown model "<name>" (presets: a, b, ...)" when none has that name.
template <typename Shape>
[[nodiscard]] const Shape& preset_named(const std::vector<Shape>& presets, std::string_view name) {
  const std::string l = to_lower(name);
  for (const auto& p : presets) {
    if (p.name == l) return p;
  }
  throw UserError(fmt::format("unknown model \"{}\" (presets: {})", name, fmt::join(preset_names_of(presets), ", ")));
}

}  // namespace fabench::kv
