// The three outputs of a judged run, one source file each: JSON (report_json.cpp: every pair,
// every attempt with its measurements in named units, counters, violations, verdicts, the fleet
// statistics, culprits, the spec and the caller's metadata object), JUnit XML (report_junit.cpp:
// one testcase per pair, a failure with the reasons for a failed pair, flaky pairs pass with their
// history in system-out, culprits in the suite's system-out) and the console summary
// (report_text.cpp). docs/accept.md shows each.
#pragma once

#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "fabench/accept/judge.hpp"
#include "fabench/accept/result.hpp"
#include "fabench/accept/spec.hpp"

namespace fabench::accept {

struct Report {
  const Spec& spec;
  std::span<const Node> nodes;
  std::span<const PairResult> results;
  const Judgement& judgement;  // judge(spec, nodes, results)
};

// Format version of report_json's output ("fabench_accept": 1).
inline constexpr int kReportVersion = 1;

[[nodiscard]] nlohmann::json report_json(const Report& r, const nlohmann::json& metadata);
[[nodiscard]] std::string report_junit(const Report& r);
[[nodiscard]] std::string report_text(const Report& r);

}  // namespace fabench::accept
