#include "fabench/harness/cli.hpp"

#include <charconv>
#include <cmath>
#include <limits>
#include <string_view>

#include <CLI/CLI.hpp>
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <iostream>

#include "fabench/verbs/port.hpp"

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

ContextOptions DeviceFlags::context_options() const {
  ContextOptions o;
  o.device = device;
  o.ib_port = static_cast<std::uint8_t>(ib_port);
  o.gid_index = gid_index;
  o.ipv6_gid = ipv6_gid;
  return o;
}

std::chrono::milliseconds DeviceFlags::timeout() const {
  return std::chrono::milliseconds(static_cast<std::int64_t>(timeout_s * 1000));
}

void add_device_flags(CLI::App& app, DeviceFlags& f) {
  app.add_option("-d,--ib-dev", f.device, "RDMA device (default: first with an ACTIVE port)");
  app.add_option("-i,--ib-port", f.ib_port, "Device port (default: first ACTIVE)")->check(whole_number("-i", 1, 255));
  app.add_option("-x,--gid-index", f.gid_index, "GID index (default: RoCE v2 over IPv4 first, like perftest)")
      ->check(whole_number("-x", 0, 65535));
  app.add_option("--timeout", f.timeout_s, "Seconds to wait for a peer or for progress before giving up (default 30)")
      ->check(positive_seconds("--timeout"));
  app.add_flag("-v,--verbose", f.verbose, "Log more");
}

std::vector<std::string> split_list(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const auto pos = text.find(sep, start);
    out.push_back(text.substr(start, pos - start));
    if (pos == std::string::npos) break;
    start = pos + 1;
  }
  return out;
}

std::uint64_t parse_bytes(const std::string& text) {
  if (text.empty()) throw std::invalid_argument("empty size");
  const std::string_view all = text;
  const std::string_view digits = all.substr(0, all.find_first_not_of("0123456789"));
  const std::string_view suffix = all.substr(digits.size());
  const auto value = parse_integer<std::uint64_t>(digits);
  if (!value) throw std::invalid_argument(fmt::format("'{}' is not a size", text));
  std::uint64_t mult = 1;
  if (suffix == "" || suffix == "B") mult = 1;
  else if (suffix == "K" || suffix == "k" || suffix == "KiB") mult = 1ULL << 10;
  else if (suffix == "M" || suffix == "MiB") mult = 1ULL << 20;
  else if (suffix == "G" || suffix == "GiB") mult = 1ULL << 30;
  else throw std::invalid_argument(fmt::format("'{}': unknown unit '{}' (use K, M or G)", text, suffix));
  if (*value > (~0ULL) / mult) throw std::invalid_argument(fmt::format("'{}' is too large", text));
  return *value * mult;
}

std::vector<std::uint64_t> size_range(const std::string& min_text, const std::string& max_text, std::uint64_t factor) {
  auto bytes = [](const char* flag, const std::string& text) {
    try {
      return parse_bytes(text);
    } catch (const std::invalid_argument& e) {
      throw UsageError(fmt::format("{}: {}", flag, e.what()));
    }
  };
  const auto lo = bytes("-b", min_text);
  const auto hi = bytes("-e", max_text);
  if (lo == 0 || hi < lo) throw UsageError(fmt::format("-b {} -e {}: need 0 < -b <= -e", min_text, max_text));
  if (factor < 2) throw UsageError(fmt::format("-f must be at least 2 (got {})", factor));
  std::vector<std::uint64_t> out;
  for (std::uint64_t s = lo;; s *= factor) {
    out.push_back(s);
    if (s > hi / factor) break;  // the next would pass -e (or overflow)
  }
  return out;
}

std::vector<std::uint64_t> parse_sizes(const std::string& text) {
  std::vector<std::uint64_t> out;
  for (const auto& t : split_list(text)) {
    const auto v = parse_bytes(t);
    if (v == 0) throw std::invalid_argument("message size 0 is not measurable");
    out.push_back(v);
  }
  return out;
}

std::vector<std::uint64_t> all_sizes() {
  std::vector<std::uint64_t> out;
  for (std::uint64_t s = 2; s <= (8ULL << 20); s *= 2) out.push_back(s);
  return out;
}

std::string check_path_mtu(std::string_view flag, std::uint32_t bytes) {
  // The IBV_MTU_* values round-trip; anything else is not a path MTU.
  if (bytes == 0 || verbs::mtu_bytes(verbs::mtu_from_bytes(bytes)) == bytes) return {};
  return fmt::format("{} {}: MTU must be {}", flag, bytes, kPathMtuChoices);
}

std::optional<int> parse_command_line(CLI::App& app, int& argc, char** argv, std::string_view prog,
                                      std::string_view extra_help) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "-h" || a == "--help") {
      std::cout << app.help() << extra_help;
      return 0;
    }
  }
  benchmark::Initialize(&argc, argv);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::cerr << prog << ": error: " << parse_error_text(e) << " (see --help)\n";
    return 2;
  }
  return std::nullopt;
}

}  // namespace fabench::harness
