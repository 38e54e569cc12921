// Attempt / PairResult <-> JSON with one-line errors (result_json.hpp).
#include "fabench/accept/result_json.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "fabench/accept/error.hpp"

namespace fabench::accept {

namespace {

using nlohmann::json;

[[noreturn]] void bad(std::string_view origin, std::string_view field, std::string_view what, const json& got) {
  throw AcceptError(fmt::format("{}: {} {} (got {})", origin, field, what, got.dump()));
}

const json& field(const json& j, std::string_view origin, const char* name) {
  const auto it = j.find(name);
  if (it == j.end()) throw AcceptError(fmt::format("{}: missing field {}", origin, name));
  return *it;
}

double measurement(const json& j, std::string_view origin, const char* name) {
  const json& v = field(j, origin, name);
  if (v.is_null()) return kNotMeasured;
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0)
    bad(origin, name, "must be a number >= 0 or null", v);
  return v.get<double>();
}

// Optional (reports written before lanes were measured lack it): absent is empty.
std::vector<double> lanes(const json& j, std::string_view origin, const char* name) {
  const auto it = j.find(name);
  if (it == j.end()) return {};
  if (!it->is_array()) bad(origin, name, "must be an array of numbers", *it);
  std::vector<double> out;
  for (const json& x : *it) {
    if (!x.is_number() || !std::isfinite(x.get<double>()) || x.get<double>() < 0)
      bad(origin, name, "must hold numbers >= 0", x);
    out.push_back(x.get<double>());
  }
  return out;
}

std::map<std::string, std::int64_t> counters(const json& j, std::string_view origin, const char* name) {
  const json& v = field(j, origin, name);
  if (!v.is_object()) bad(origin, name, "must be an object of counter deltas", v);
  std::map<std::string, std::int64_t> out;
  for (const auto& [k, x] : v.items()) {
    // The name as JSON quotes it (a control character escaped): the error stays one line.
    if (!x.is_number_integer()) bad(origin, fmt::format("{}.{}", name, json(k).dump()), "must be a whole number", x);
    out[k] = x.get<std::int64_t>();
  }
  return out;
}

std::uint32_t count(const json& j, std::string_view origin, const char* name, std::uint32_t min) {
  const json& v = field(j, origin, name);
  if (!v.is_number_unsigned() || v.get<std::uint64_t>() < min ||
      v.get<std::uint64_t>() > std::numeric_limits<std::uint32_t>::max())
    bad(origin, name, fmt::format("must be a whole number >= {}", min), v);
  return v.get<std::uint32_t>();
}

Status status_from(const json& v, std::string_view origin) {
  for (const Status s : {Status::kOk, Status::kFailed, Status::kTimeout}) {
    if (v.is_string() && v.get<std::string>() == status_name(s)) return s;
  }
  bad(origin, "status", "must be \"ok\", \"failed\" or \"timeout\"", v);
}

}  // namespace

json number_or_null(double v) { return std::isnan(v) ? json(nullptr) : json(v); }

json attempt_to_json(const Attempt& a) {
  return {{"status", status_name(a.status)},
          {"reason", a.reason},
          {"qps", a.qps},
          {"duration_s", a.duration_s},
          {"bw_a_to_b_gbps", number_or_null(a.bw_a_to_b_gbps)},
          {"bw_b_to_a_gbps", number_or_null(a.bw_b_to_a_gbps)},
          {"bw_bidir_gbps", number_or_null(a.bw_bidir_gbps)},
          {"lat_p50_us", number_or_null(a.lat_p50_us)},
          {"lat_p99_us", number_or_null(a.lat_p99_us)},
          {"lat_max_us", number_or_null(a.lat_max_us)},
          {"lanes_a_to_b_gbps", a.lanes_a_to_b_gbps},
          {"lanes_b_to_a_gbps", a.lanes_b_to_a_gbps},
          {"counters_a", a.counters_a},
          {"counters_b", a.counters_b}};
}

Attempt attempt_from_json(const json& j, std::string_view origin) {
  if (!j.is_object()) bad(origin, "attempt", "must be an object", j);
  Attempt a;
  a.status = status_from(field(j, origin, "status"), origin);
  const json& reason = field(j, origin, "reason");
  if (!reason.is_string()) bad(origin, "reason", "must be a string", reason);
  a.reason = reason.get<std::string>();
  a.qps = count(j, origin, "qps", 1);
  a.duration_s = measurement(j, origin, "duration_s");
  if (std::isnan(a.duration_s)) a.duration_s = 0;
  a.bw_a_to_b_gbps = measurement(j, origin, "bw_a_to_b_gbps");
  a.bw_b_to_a_gbps = measurement(j, origin, "bw_b_to_a_gbps");
  a.bw_bidir_gbps = measurement(j, origin, "bw_bidir_gbps");
  a.lat_p50_us = measurement(j, origin, "lat_p50_us");
  a.lat_p99_us = measurement(j, origin, "lat_p99_us");
  a.lat_max_us = measurement(j, origin, "lat_max_us");
  a.lanes_a_to_b_gbps = lanes(j, origin, "lanes_a_to_b_gbps");
  a.lanes_b_to_a_gbps = lanes(j, origin, "lanes_b_to_a_gbps");
  a.counters_a = counters(j, origin, "counters_a");
  a.counters_b = counters(j, origin, "counters_b");
  return a;
}

json pair_result_to_json(const PairResult& p) {
  json attempts = json::array();
  for (const Attempt& a : p.attempts) attempts.push_back(attempt_to_json(a));
  return {{"a", p.pair.a}, {"b", p.pair.b}, {"round", p.round}, {"attempts", std::move(attempts)}};
}

PairResult pair_result_from_json(const json& j, std::string_view origin) {
  if (!j.is_object()) bad(origin, "pair", "must be an object", j);
  PairResult p;
  p.pair.a = count(j, origin, "a", 0);
  p.pair.b = count(j, origin, "b", 0);
  p.round = count(j, origin, "round", 0);
  const json& attempts = field(j, origin, "attempts");
  if (!attempts.is_array() || attempts.empty()) bad(origin, "attempts", "must be a non-empty array", attempts);
  for (std::size_t i = 0; i < attempts.size(); ++i)
    p.attempts.push_back(attempt_from_json(attempts[i], fmt::format("{}: attempt {}", origin, i + 1)));
  return p;
}

}  // namespace fabench::accept
