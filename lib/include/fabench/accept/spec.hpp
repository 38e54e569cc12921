// Spec: what a pair must meet to pass, how the fleet rule and the attribution judge, how often a
// bad pair is measured again. The same fields come from flags (the driver maps --min-bw-fraction
// and so on onto them, then calls validate()) or from a JSON file (load_spec), e.g.
//
//   {
//     "port_gbps": 100,              // 0 or absent: each node's own active port rate
//     "min_bw_fraction": 0.9,        // each direction >= 0.9 x port rate (the slower end's)
//     "min_bidir_fraction": 0.9,     // both directions at once >= 0.9 x 2 x port rate
//     "max_p99_us": 10,              // latency p99 ceiling; 0: not checked
//     "outlier_k": 5,                // fleet rule; 0: off
//     "outlier_min_fraction": 0.05,  // never an outlier within 5 % of the fleet median
//     "retests": 1,                  // a bad pair is measured up to 1 more time
//     "zero_counters": ["symbol_error", "link_downed"],
//     "node_bad_fraction": 0.5       // a node bad in more than half of its pairs is the culprit
//   }
//
// (JSON has no comments; they are here for the reader.) Every field is optional; the defaults are
// the values of Spec below. A 0 fraction turns its rule off.
//
// Fleet rule: for each of bandwidth a->b, b->a, bidirectional (lower is worse) and latency p50
// (higher is worse), over the counting attempt of every pair whose status is ok, a value worse
// than the median by more than max(outlier_k x MAD, outlier_min_fraction x median) marks the pair
// an outlier. MAD is scaled by 1.4826 so that it estimates the standard deviation of normal
// noise: k = 5 is a 5-sigma rule, about one false alarm in 3.5 million normal values (a 1024-node
// run has 1.6 million values). The floor is there because on a healthy fabric every link runs at
// line rate and the MAD collapses towards 0, where any dip of a fraction of a percent would
// otherwise count. Latency p99 is judged against max_p99_us only: a tail is too noisy for a fleet
// rule. The rule needs at least kMinFleetPairs pairs.
//
// Errors are one AcceptError line naming the file (or "spec" for flags) and the field:
//   "spec.json: min_bw_fraction must be a number within 0..1 (got 1.5)"
//   "spec.json: \"min_bw\" is not a spec field (fields: port_gbps, min_bw_fraction, ...)"
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace fabench::accept {

inline constexpr std::size_t kMinFleetPairs = 8;
inline constexpr std::uint32_t kMaxRetests = 10;

// Port counters (sysfs names, /sys/class/infiniband/DEV/ports/N/counters) that count physical or
// link-level errors: on a healthy link they do not move during a run.
[[nodiscard]] const std::vector<std::string>& default_zero_counters();

struct Spec {
  double port_gbps = 0;
  double min_bw_fraction = 0.9;
  double min_bidir_fraction = 0.9;
  double max_p99_us = 0;
  double outlier_k = 5;
  double outlier_min_fraction = 0.05;
  std::uint32_t retests = 1;
  std::vector<std::string> zero_counters = default_zero_counters();
  double node_bad_fraction = 0.5;
  friend bool operator==(const Spec&, const Spec&) = default;
};

// Throws AcceptError "<origin>: <field> ..." for the first field out of range.
void validate(const Spec& s, std::string_view origin = "spec");

// A JSON object as above; `origin` names it in errors (the file name). Validated.
[[nodiscard]] Spec spec_from_json(const nlohmann::json& j, std::string_view origin);
// Reads, parses and validates a spec file; unreadable or not JSON is one line too.
[[nodiscard]] Spec load_spec(const std::filesystem::path& path);
// Every field, for the report (spec_from_json(spec_to_json(s)) == s).
[[nodiscard]] nlohmann::json spec_to_json(const Spec& s);

}  // namespace fabench::accept
