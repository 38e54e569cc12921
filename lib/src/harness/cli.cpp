#include "fabench/harness/cli.hpp"

#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace fabench::harness {

namespace {

// CLI11 hands validators the text after an '=' with the '=' kept ("-D=-1").
std::string_view value_text(const std::string& s) {
  std::string_view v = s;
  if (v.starts_with('=')) v.remove_prefix(1);
  return v;
}

std::string range_words(std::int64_t min, std::int64_t max) {
  if (max == std::numeric_limits<std::int64_t>::max()) return fmt::format("at least {}", min);
  return fmt::format("from {} to {}", min, max);
}

}  // namespace

CLI::Validator whole_number(std::string flag, std::int64_t min, std::int64_t max) {
  auto check = [flag, min, max](std::string& s) -> std::string {
    const std::string_view v = value_text(s);
    std::int64_t n = 0;
    const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec == std::errc::result_out_of_range) {
      if (v.starts_with('-')) return fmt::format("{} must be {} (got {})", flag, range_words(min, max), v);
      return fmt::format("{}: {} is too large (at most {})", flag, v, max);
    }
    if (ec != std::errc{} || ptr != v.data() + v.size() || v.empty()) {
      return fmt::format("{}: '{}' is not a whole number (expected {})", flag, v, range_words(min, max));
    }
    if (n < min || n > max) return fmt::format("{} must be {} (got {})", flag, range_words(min, max), v);
    return {};
  };
  return CLI::Validator(check, fmt::format("INT {}", range_words(min, max)), "");
}

CLI::Validator positive_seconds(std::string flag) {
  auto check = [flag](std::string& s) -> std::string {
    const std::string_view v = value_text(s);
    const std::string text(v);
    char* end = nullptr;
    const double d = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(d)) {
      return fmt::format("{}: '{}' is not a number of seconds", flag, v);
    }
    if (d <= 0) return fmt::format("{} must be more than 0 seconds (got {})", flag, v);
    return {};
  };
  return CLI::Validator(check, "SECONDS > 0", "");
}

std::string parse_error_text(const CLI::ParseError& error) {
  std::string text = error.what();
  if (dynamic_cast<const CLI::ValidationError*>(&error) != nullptr) {
    // "--iters: -n must be ...": our validator's line already names the flag.
    const auto colon = text.find(": -");
    if (colon != std::string::npos && text.starts_with("-")) text.erase(0, colon + 2);
  }
  return text;
}

}  // namespace fabench::harness
