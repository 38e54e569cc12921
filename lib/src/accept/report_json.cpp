// report_json: the whole judged run as JSON; measurements in named units, NaN (not measured) as null.
#include <cmath>

#include "fabench/accept/report.hpp"
#include "fabench/accept/result_json.hpp"

namespace fabench::accept {

namespace {

using nlohmann::json;

json attempt_json(const Attempt& at, const std::vector<Violation>& violations) {
  json v = json::array();
  for (const auto& x : violations) v.push_back({{"rule", rule_name(x.rule)}, {"text", x.text}});
  json out = attempt_to_json(at);
  out["violations"] = std::move(v);
  return out;
}

json pairs_json(const Report& r) {
  json out = json::array();
  for (std::size_t i = 0; i < r.results.size(); ++i) {
    const PairResult& pr = r.results[i];
    const PairVerdict& pv = r.judgement.pairs[i];
    json attempts = json::array();
    for (std::size_t k = 0; k < pr.attempts.size(); ++k)
      attempts.push_back(attempt_json(pr.attempts[k], pv.attempts[k]));
    out.push_back({{"a", pr.pair.a},
                   {"b", pr.pair.b},
                   {"a_name", r.nodes[pr.pair.a].name},
                   {"b_name", r.nodes[pr.pair.b].name},
                   {"round", pr.round},
                   {"verdict", verdict_name(pv.verdict)},
                   {"attempts", std::move(attempts)}});
  }
  return out;
}

json culprits_json(const Report& r) {
  json out = json::array();
  for (const Culprit& c : r.judgement.culprits) {
    json nodes = c.kind == Culprit::Kind::kNode ? json::array({c.a}) : json::array({c.a, c.b});
    json names = json::array();
    for (const auto& x : nodes) names.push_back(r.nodes[x.get<std::uint32_t>()].name);
    json pairs = json::array();
    for (const std::size_t i : c.pairs) pairs.push_back({r.results[i].pair.a, r.results[i].pair.b});
    out.push_back({{"kind", culprit_kind_name(c.kind)},
                   {"nodes", std::move(nodes)},
                   {"names", std::move(names)},
                   {"pairs", std::move(pairs)},
                   {"evidence", c.evidence}});
  }
  return out;
}

}  // namespace

json report_json(const Report& r, const json& metadata) {
  const Judgement& j = r.judgement;
  json nodes = json::array();
  for (std::uint32_t i = 0; i < r.nodes.size(); ++i) {
    nodes.push_back({{"index", i}, {"name", r.nodes[i].name}, {"port_gbps", r.nodes[i].port_gbps}});
  }
  json fleet = json::object();
  for (std::size_t m = 0; m < kMetrics; ++m) {
    const FleetStat& f = j.fleet[m];
    fleet[std::string(metric_name(static_cast<Metric>(m)))] = {{"count", f.count},
                                                               {"median", number_or_null(f.median)},
                                                               {"mad", number_or_null(f.mad)},
                                                               {"threshold", number_or_null(f.threshold)}};
  }
  return {{"fabench_accept", kReportVersion},
          {"metadata", metadata},
          {"units", {{"bandwidth", "Gb/s (G = 1e9 bits of payload per second)"}, {"latency", "us"}, {"time", "s"}}},
          {"spec", spec_to_json(r.spec)},
          {"nodes", std::move(nodes)},
          {"summary",
           {{"verdict", j.ok() ? "pass" : "fail"},
            {"pairs", r.results.size()},
            {"passed", j.passed},
            {"flaky", j.flaky},
            {"failed", j.failed},
            {"retest_pending", j.retest.size()}}},
          {"fleet", std::move(fleet)},
          {"culprits", culprits_json(r)},
          {"pairs", pairs_json(r)}};
}

}  // namespace fabench::accept
