// Spec: defaults, validation, and the JSON spec file with one-line errors naming file and field.
#include "fabench/accept/spec.hpp"

#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fabench/accept/error.hpp"

namespace fabench::accept {

namespace {

using nlohmann::json;

constexpr std::string_view kFields[] = {"port_gbps",  "min_bw_fraction", "min_bidir_fraction",
                                        "max_p99_us", "outlier_k",       "outlier_min_fraction",
                                        "retests",    "zero_counters",   "node_bad_fraction"};

[[noreturn]] void fail(std::string_view origin, std::string_view field, std::string_view what) {
  throw AcceptError(fmt::format("{}: {} {}", origin, field, what));
}

// Finite and within [lo, hi] (or [lo, hi) when hi_open).
void check_range(std::string_view origin, std::string_view field, double v, double lo, double hi, bool hi_open) {
  const bool ok = std::isfinite(v) && v >= lo && (hi_open ? v < hi : v <= hi);
  if (ok) return;
  const std::string range = std::isinf(hi) ? fmt::format("at least {}", lo)
                                           : fmt::format("within {}..{}{}", lo, hi, hi_open ? " (excluded)" : "");
  fail(origin, field, fmt::format("must be a number {} (got {})", range, v));
}

double read_number(std::string_view origin, const json& j, std::string_view field) {
  if (!j.is_number()) fail(origin, field, fmt::format("must be a number (got {})", j.dump()));
  return j.get<double>();
}

std::uint32_t read_retests(std::string_view origin, const json& j) {
  const bool ok = j.is_number_unsigned() || (j.is_number_integer() && j.get<std::int64_t>() >= 0);
  if (!ok || j.get<std::uint64_t>() > kMaxRetests) {
    fail(origin, "retests", fmt::format("must be an integer within 0..{} (got {})", kMaxRetests, j.dump()));
  }
  return static_cast<std::uint32_t>(j.get<std::uint64_t>());
}

std::vector<std::string> read_counters(std::string_view origin, const json& j) {
  if (!j.is_array()) fail(origin, "zero_counters", fmt::format("must be an array of counter names (got {})", j.dump()));
  std::vector<std::string> names;
  for (const json& e : j) {
    if (!e.is_string() || e.get<std::string>().empty()) {
      fail(origin, "zero_counters", fmt::format("must hold non-empty strings (got {})", e.dump()));
    }
    names.push_back(e.get<std::string>());
  }
  return names;
}

void read_field(std::string_view origin, const std::string& key, const json& v, Spec& s) {
  if (key == "retests") {
    s.retests = read_retests(origin, v);
  } else if (key == "zero_counters") {
    s.zero_counters = read_counters(origin, v);
  } else {
    double* const slot = key == "port_gbps"              ? &s.port_gbps
                         : key == "min_bw_fraction"      ? &s.min_bw_fraction
                         : key == "min_bidir_fraction"   ? &s.min_bidir_fraction
                         : key == "max_p99_us"           ? &s.max_p99_us
                         : key == "outlier_k"            ? &s.outlier_k
                         : key == "outlier_min_fraction" ? &s.outlier_min_fraction
                         : key == "node_bad_fraction"    ? &s.node_bad_fraction
                                                         : nullptr;
    if (slot == nullptr) {
      // Quoted as JSON (control characters escaped, bad UTF-8 replaced): the line stays one line.
      fail(origin, json(key).dump(-1, ' ', false, json::error_handler_t::replace),
           fmt::format("is not a spec field (fields: {})", fmt::join(kFields, ", ")));
    }
    *slot = read_number(origin, v, key);
  }
}

}  // namespace

const std::vector<std::string>& default_zero_counters() {
  static const std::vector<std::string> names{"symbol_error",
                                              "link_error_recovery",
                                              "link_downed",
                                              "port_rcv_errors",
                                              "port_rcv_remote_physical_errors",
                                              "local_link_integrity_errors",
                                              "excessive_buffer_overrun_errors"};
  return names;
}

void validate(const Spec& s, std::string_view origin) {
  constexpr double kInf = INFINITY;
  check_range(origin, "port_gbps", s.port_gbps, 0, kInf, false);
  check_range(origin, "min_bw_fraction", s.min_bw_fraction, 0, 1, false);
  check_range(origin, "min_bidir_fraction", s.min_bidir_fraction, 0, 1, false);
  check_range(origin, "max_p99_us", s.max_p99_us, 0, kInf, false);
  check_range(origin, "outlier_k", s.outlier_k, 0, kInf, false);
  check_range(origin, "outlier_min_fraction", s.outlier_min_fraction, 0, 1, true);
  check_range(origin, "node_bad_fraction", s.node_bad_fraction, 0, 1, true);
  if (s.retests > kMaxRetests) {
    fail(origin, "retests", fmt::format("must be an integer within 0..{} (got {})", kMaxRetests, s.retests));
  }
  for (const auto& c : s.zero_counters) {
    if (c.empty()) fail(origin, "zero_counters", "must hold non-empty strings (got \"\")");
  }
}

Spec spec_from_json(const json& j, std::string_view origin) {
  if (!j.is_object()) throw AcceptError(fmt::format("{}: not a JSON object", origin));
  Spec s;
  for (const auto& [key, value] : j.items()) read_field(origin, key, value, s);
  validate(s, origin);
  return s;
}

Spec load_spec(const std::filesystem::path& path) {
  const std::string file = path.string();
  std::ifstream in(path, std::ios::binary);
  if (!in) throw AcceptError(fmt::format("{}: cannot open (no such file, or not readable)", file));
  std::ostringstream buf;
  buf << in.rdbuf();
  json j;
  try {
    j = json::parse(buf.str());
  } catch (const json::parse_error& e) {
    throw AcceptError(fmt::format("{}: not JSON (parse error at byte {})", file, e.byte));
  } catch (const json::out_of_range&) {  // a number beyond a double ("1e400")
    throw AcceptError(fmt::format("{}: not JSON (a number out of range)", file));
  }
  return spec_from_json(j, file);
}

json spec_to_json(const Spec& s) {
  return json{{"port_gbps", s.port_gbps},
              {"min_bw_fraction", s.min_bw_fraction},
              {"min_bidir_fraction", s.min_bidir_fraction},
              {"max_p99_us", s.max_p99_us},
              {"outlier_k", s.outlier_k},
              {"outlier_min_fraction", s.outlier_min_fraction},
              {"retests", s.retests},
              {"zero_counters", s.zero_counters},
              {"node_bad_fraction", s.node_bad_fraction}};
}

}  // namespace fabench::accept
