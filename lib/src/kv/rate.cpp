// parse_link_rate: "400G", "200Gb", "50Gbps", ... -> bytes per second (G = 1e9 bits).
#include <array>
#include <charconv>
#include <string>

#include <fmt/format.h>

#include "fabench/kv/error.hpp"
#include "fabench/kv/plan.hpp"

namespace fabench::kv {

namespace {

double prefix_scale(char c) {
  switch (c) {
    case 'm':
    case 'M': return 1e6;
    case 'g':
    case 'G': return 1e9;
    case 't':
    case 'T': return 1e12;
    default: return 0.0;
  }
}

}  // namespace

double parse_link_rate(std::string_view s) {
  const auto fail = [&] {
    return KvError(
        fmt::format("link rate \"{}\" is not a rate in bits per second (e.g. 400G, 200Gb, 50Gbps; G = 1e9)", s));
  };
  double value = 0.0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end == s.data() + s.size() || !(value > 0.0)) throw fail();
  const double scale = prefix_scale(*end);
  if (scale == 0.0) throw fail();
  const std::string_view unit(end + 1, static_cast<std::size_t>(s.data() + s.size() - (end + 1)));
  static constexpr std::array<std::string_view, 6> kUnits{"", "b", "bps", "b/s", "bit", "bit/s"};
  for (std::string_view u : kUnits) {
    if (unit == u) return value * scale / 8.0;
  }
  throw fail();
}

}  // namespace fabench::kv
