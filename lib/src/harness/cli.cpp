#include "fabench/harness/cli.hpp"

#include <charconv>
#include <cmath>
#include <limits>
#include <string_view>

#include <CLI/CLI.hpp>
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <iostream>

#include "fabench/base/build_info.hpp"
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

CLI::Validator number_at_least(std::string flag, double min, bool inclusive) {
  auto check = [flag, min, inclusive](std::string& s) -> std::string {
    const std::string text(value_text(s));
    char* end = nullptr;
    const double d = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(d)) {
      return fmt::format("{}: '{}' is not a number", flag, text);
    }
    if (inclusive ? d < min : d <= min) {
      return fmt::format("{} must be {} {} (got {})", flag, inclusive ? "at least" : "more than", min, text);
    }
    return {};
  };
  return CLI::Validator(check, "", "");
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
  app.add_option("-d,--ib-dev", f.device, "RDMA device (default: first with an ACTIVE port)")->type_name("DEV");
  app.add_option("-i,--ib-port", f.ib_port, "Device port (default: first ACTIVE)")->check(whole_number("-i", 1, 255));
  app.add_option("-x,--gid-index", f.gid_index, "GID index (default: RoCE v2 over IPv4 first, like perftest)")
      ->check(whole_number("-x", 0, 65535));
  app.add_option("--timeout", f.timeout_s, "Seconds to wait for a peer or for progress before giving up (default 30)")
      ->type_name("SECONDS")
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
  if (text.empty()) throw UserError("empty size");
  const std::string_view all = text;
  const std::string_view digits = all.substr(0, all.find_first_not_of("0123456789"));
  const std::string_view suffix = all.substr(digits.size());
  const auto value = parse_integer<std::uint64_t>(digits);
  if (!value && !digits.empty()) throw UserError(fmt::format("'{}' is too large", text));
  if (!value) throw UserError(fmt::format("'{}' is not a size", text));
  std::uint64_t mult = 1;
  if (suffix == "" || suffix == "B") mult = 1;
  else if (suffix == "K" || suffix == "k" || suffix == "KiB") mult = 1ULL << 10;
  else if (suffix == "M" || suffix == "MiB") mult = 1ULL << 20;
  else if (suffix == "G" || suffix == "GiB") mult = 1ULL << 30;
  else throw UserError(fmt::format("'{}': unknown unit '{}' (use K, M or G)", text, suffix));
  if (*value > (~0ULL) / mult) throw UserError(fmt::format("'{}' is too large", text));
  return *value * mult;
}

std::vector<std::uint64_t> size_range(const std::string& min_text, const std::string& max_text, std::uint64_t factor) {
  auto bytes = [](const char* flag, const std::string& text) {
    try {
      return parse_bytes(text);
    } catch (const UserError& e) {
      throw UserError(fmt::format("{}: {}", flag, e.what()));
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

std::vector<std::uint64_t> parse_sizes(const std::string& text, std::string_view flag) {
  std::vector<std::uint64_t> out;
  for (const auto& t : split_list(text)) {
    if (t.empty()) {
      throw UsageError(text.empty() ? fmt::format("{}: no size given", flag)
                                    : fmt::format("{} {}: an empty size in the list", flag, text));
    }
    const auto v = parse_flag_bytes(flag, t);
    if (v == 0) throw UsageError(fmt::format("{} {}: message size 0 is not measurable", flag, text));
    out.push_back(v);
  }
  return out;
}

std::uint64_t parse_flag_bytes(std::string_view flag, const std::string& text) {
  try {
    return parse_bytes(text);
  } catch (const UserError& e) {
    throw UserError(fmt::format("{}: {}", flag, e.what()));
  }
}

std::vector<std::uint64_t> all_sizes() {
  std::vector<std::uint64_t> out;
  for (std::uint64_t s = 2; s <= (8ULL << 20); s *= 2) out.push_back(s);
  return out;
}

std::optional<UserError> check_path_mtu(std::string_view flag, std::uint32_t bytes) {
  // The IBV_MTU_* values round-trip; anything else is not a path MTU.
  if (bytes == 0 || verbs::mtu_bytes(verbs::mtu_from_bytes(bytes)) == bytes) return std::nullopt;
  return UserError(fmt::format("{} {}: MTU must be {}", flag, bytes, kPathMtuChoices));
}

namespace {

// Google Benchmark 1.7 prints its usage and exits 0 on a bad --benchmark_format or
// --benchmark_out_format: refuse those values here first, as one line.
std::optional<UserError> check_benchmark_flags(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    for (const std::string_view flag : {"--benchmark_format=", "--benchmark_out_format="}) {
      if (!a.starts_with(flag)) continue;
      const std::string_view v = a.substr(flag.size());
      if (v != "console" && v != "json" && v != "csv") {
        return UserError(fmt::format("{} {}: expected console, json or csv", flag.substr(0, flag.size() - 1), v));
      }
    }
    if (a == "--benchmark_color=") return UserError("--benchmark_color: expected true, false or auto");
  }
  return std::nullopt;
}

bool looks_like_flag(std::string_view a) {
  if (a.size() < 2 || a[0] != '-') return false;
  return !(a[1] >= '0' && a[1] <= '9') && a[1] != '.';  // -5 is a value
}

// CLI11 lists the leftover arguments ("not expected: hostB -q"); the user
// needs the unknown flag, or the one positional argument too many.
std::string extras_text(const CLI::App& app, const CLI::ParseError& error) {
  const auto rest = app.remaining();
  for (const auto& a : rest) {
    if (a.starts_with("--benchmark_")) {
      return fmt::format("{}: not a Google Benchmark flag, or a bad value for one", a);
    }
    if (looks_like_flag(a)) return fmt::format("unknown flag {}", a.substr(0, a.find('=')));
  }
  if (!rest.empty()) return fmt::format("unexpected argument '{}'", rest.front());
  return parse_error_text(error);
}

}  // namespace

std::optional<int> parse_command_line(CLI::App& app, int& argc, char** argv, std::string_view prog,
                                      std::string_view extra_help) {
  use_help_layout(app);
  if (app.get_option_no_throw("--version") == nullptr) {
    app.set_version_flag("-V,--version", std::string(fabench::build_version()), "Print fabench's version and exit");
  }
  app.set_help_flag("-h,--help", "Print this help and exit");
  if (app.get_option_no_throw("--help-all") == nullptr) {
    app.add_flag("--help-all")->description("Print the help with every flag (also the perftest compatibility ones)");
  }
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "-h" || a == "--help" || a == "--help-all") {
      // The epilogue, last: the exit statuses, the same rule in every binary (run_main).
      std::cout << help_text(app, a == "--help-all") << extra_help << '\n' << kExitStatusHelp;
      return 0;
    }
  }
  if (auto bad = check_benchmark_flags(argc, argv)) {
    std::cerr << prog << ": error: " << bad->what() << " (see --help)\n";
    return kExitUserError;
  }
  benchmark::Initialize(&argc, argv);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    const bool extras = dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr;
    std::cerr << prog << ": error: " << (extras ? extras_text(app, e) : parse_error_text(e)) << " (see --help)\n";
    return kExitUserError;
  }
  return std::nullopt;
}

}  // namespace fabench::harness
