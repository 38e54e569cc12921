// lib/accept reports against golden text: JSON, JUnit XML and the console summary of a small
// judged matrix (3 nodes: a bad link, a flaky pair, a good one), and XML escaping.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "fabench/accept/judge.hpp"
#include "fabench/accept/report.hpp"

using namespace fabench::accept;

namespace {

Attempt report_attempt() {
  Attempt a;
  a.duration_s = 2;
  a.bw_a_to_b_gbps = 97;
  a.bw_b_to_a_gbps = 97.5;
  a.bw_bidir_gbps = 192;
  a.lat_p50_us = 2;
  a.lat_p99_us = 3.5;
  a.lat_max_us = 9;
  return a;
}

struct Run {
  std::vector<Node> nodes{{"h0", 100}, {"h1", 100}, {"h2", 100}};
  Spec spec;
  std::vector<PairResult> results;
  Judgement judgement;

  Run() {
    spec.max_p99_us = 10;
    spec.zero_counters = {"symbol_error"};
    Attempt bad = report_attempt();
    bad.bw_a_to_b_gbps = 40;
    Attempt timeout;
    timeout.status = Status::kTimeout;
    timeout.reason = "peer silent for 10 s";
    timeout.duration_s = 12;
    Attempt counted = report_attempt();
    counted.counters_a = {{"symbol_error", 0}};
    counted.counters_b = {{"port_xmit_wait", 1200}, {"symbol_error", 0}};
    results = {{{1, 2}, 0, {counted}}, {{0, 2}, 1, {timeout, report_attempt()}}, {{0, 1}, 2, {bad, bad}}};
    judgement = judge(spec, nodes, results);
  }
  Report report() const { return {spec, nodes, results, judgement}; }
};

constexpr const char* kGoldenJson = R"golden({
 "culprits": [{"evidence": "link 0-1 (h0-h1): bandwidth h0->h1 40 Gb/s below 90 Gb/s (0.9 x 100 Gb/s); node 0 passes 1 of its 1 other pairs, node 1 passes 1 of 1: suspect the path, not a node", "kind": "link", "names": ["h0", "h1"], "nodes": [0, 1], "pairs": [[0, 1]]}],
 "fabench_accept": 1,
 "fleet": {
  "bw_a_to_b_gbps": {"count": 3, "mad": 0.0, "median": 97.0, "threshold": null},
  "bw_b_to_a_gbps": {"count": 3, "mad": 0.0, "median": 97.5, "threshold": null},
  "bw_bidir_gbps": {"count": 3, "mad": 0.0, "median": 192.0, "threshold": null},
  "lat_p50_us": {"count": 3, "mad": 0.0, "median": 2.0, "threshold": null}
 },
 "metadata": {"nodes_file": "hosts.txt", "tool": "fabench-accept"},
 "nodes": [{"index": 0, "name": "h0", "port_gbps": 100.0}, {"index": 1, "name": "h1", "port_gbps": 100.0}, {"index": 2, "name": "h2", "port_gbps": 100.0}],
 "pairs": [
  {"a": 1, "a_name": "h1", "b": 2, "b_name": "h2", "round": 0, "verdict": "pass", "attempts": [
   {"bw_a_to_b_gbps": 97.0, "bw_b_to_a_gbps": 97.5, "bw_bidir_gbps": 192.0, "counters_a": {"symbol_error": 0}, "counters_b": {"port_xmit_wait": 1200, "symbol_error": 0}, "duration_s": 2.0, "lanes_a_to_b_gbps": [], "lanes_b_to_a_gbps": [], "lat_max_us": 9.0, "lat_p50_us": 2.0, "lat_p99_us": 3.5, "qps": 1, "reason": "", "status": "ok", "violations": []}
  ]},
  {"a": 0, "a_name": "h0", "b": 2, "b_name": "h2", "round": 1, "verdict": "flaky", "attempts": [
   {"bw_a_to_b_gbps": null, "bw_b_to_a_gbps": null, "bw_bidir_gbps": null, "counters_a": {}, "counters_b": {}, "duration_s": 12.0, "lanes_a_to_b_gbps": [], "lanes_b_to_a_gbps": [], "lat_max_us": null, "lat_p50_us": null, "lat_p99_us": null, "qps": 1, "reason": "peer silent for 10 s", "status": "timeout", "violations": [{"rule": "status", "text": "timeout: peer silent for 10 s"}]},
   {"bw_a_to_b_gbps": 97.0, "bw_b_to_a_gbps": 97.5, "bw_bidir_gbps": 192.0, "counters_a": {}, "counters_b": {}, "duration_s": 2.0, "lanes_a_to_b_gbps": [], "lanes_b_to_a_gbps": [], "lat_max_us": 9.0, "lat_p50_us": 2.0, "lat_p99_us": 3.5, "qps": 1, "reason": "", "status": "ok", "violations": []}
  ]},
  {"a": 0, "a_name": "h0", "b": 1, "b_name": "h1", "round": 2, "verdict": "fail", "attempts": [
   {"bw_a_to_b_gbps": 40.0, "bw_b_to_a_gbps": 97.5, "bw_bidir_gbps": 192.0, "counters_a": {}, "counters_b": {}, "duration_s": 2.0, "lanes_a_to_b_gbps": [], "lanes_b_to_a_gbps": [], "lat_max_us": 9.0, "lat_p50_us": 2.0, "lat_p99_us": 3.5, "qps": 1, "reason": "", "status": "ok", "violations": [{"rule": "bandwidth", "text": "bandwidth h0->h1 40 Gb/s below 90 Gb/s (0.9 x 100 Gb/s)"}]},
   {"bw_a_to_b_gbps": 40.0, "bw_b_to_a_gbps": 97.5, "bw_bidir_gbps": 192.0, "counters_a": {}, "counters_b": {}, "duration_s": 2.0, "lanes_a_to_b_gbps": [], "lanes_b_to_a_gbps": [], "lat_max_us": 9.0, "lat_p50_us": 2.0, "lat_p99_us": 3.5, "qps": 1, "reason": "", "status": "ok", "violations": [{"rule": "bandwidth", "text": "bandwidth h0->h1 40 Gb/s below 90 Gb/s (0.9 x 100 Gb/s)"}]}
  ]}
 ],
 "spec": {"max_p99_us": 10.0, "min_bidir_fraction": 0.9, "min_bw_fraction": 0.9, "node_bad_fraction": 0.5, "outlier_k": 5.0, "outlier_min_fraction": 0.05, "port_gbps": 0.0, "retests": 1, "zero_counters": ["symbol_error"]},
 "summary": {"failed": 1, "flaky": 1, "pairs": 3, "passed": 1, "retest_pending": 0, "verdict": "fail"},
 "units": {"bandwidth": "Gb/s (G = 1e9 bits of payload per second)", "latency": "us", "time": "s"}
})golden";

constexpr const char* kGoldenJunit = R"golden(<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="fabench-accept" tests="3" failures="1" errors="0" time="20.000">
  <testsuite name="fabench-accept" tests="3" failures="1" errors="0" skipped="0" time="20.000">
    <testcase classname="fabench-accept" name="1-2 (h1-h2)" time="2.000"/>
    <testcase classname="fabench-accept" name="0-2 (h0-h2)" time="14.000">
      <system-out>flaky:
attempt 1: timeout: peer silent for 10 s
attempt 2: passed</system-out>
    </testcase>
    <testcase classname="fabench-accept" name="0-1 (h0-h1)" time="4.000">
      <failure type="bandwidth" message="bandwidth h0-&gt;h1 40 Gb/s below 90 Gb/s (0.9 x 100 Gb/s)">attempt 1: bandwidth h0-&gt;h1 40 Gb/s below 90 Gb/s (0.9 x 100 Gb/s)
attempt 2: bandwidth h0-&gt;h1 40 Gb/s below 90 Gb/s (0.9 x 100 Gb/s)</failure>
    </testcase>
    <system-out>culprit link 0-1 (h0-h1): bandwidth h0-&gt;h1 40 Gb/s below 90 Gb/s (0.9 x 100 Gb/s); node 0 passes 1 of its 1 other pairs, node 1 passes 1 of 1: suspect the path, not a node
</system-out>
  </testsuite>
</testsuites>
)golden";

constexpr const char* kGoldenText = R"golden(fabench-accept: FAIL: 3 nodes, 3 pairs: 1 pass, 1 flaky, 1 fail
fleet medians: bw a->b 97 Gb/s (MAD 0), bw b->a 97.5 Gb/s (MAD 0), bidir 192 Gb/s (MAD 0), lat p50 2 us (MAD 0)
culprits:
  link 0-1 (h0-h1): bandwidth h0->h1 40 Gb/s below 90 Gb/s (0.9 x 100 Gb/s); node 0 passes 1 of its 1 other pairs, node 1 passes 1 of 1: suspect the path, not a node
flaky (passed on retest):
  0-2 (h0-h2): timeout: peer silent for 10 s; passed on attempt 2
failed:
  0-1 (h0-h1): bandwidth h0->h1 40 Gb/s below 90 Gb/s (0.9 x 100 Gb/s)
)golden";

}  // namespace

TEST_CASE("accept: JSON report golden", "[accept]") {
  const Run run;
  const auto j = report_json(run.report(), {{"tool", "fabench-accept"}, {"nodes_file", "hosts.txt"}});
  // Compared as dumps: every key, value and number type (97.0 is a double, 1 an integer).
  CHECK(j.dump(1) == nlohmann::json::parse(kGoldenJson).dump(1));
}

TEST_CASE("accept: JUnit report golden", "[accept]") {
  const Run run;
  CHECK(report_junit(run.report()) == kGoldenJunit);
}

TEST_CASE("accept: console summary golden", "[accept]") {
  const Run run;
  CHECK(report_text(run.report()) == kGoldenText);
}

TEST_CASE("accept: JUnit escapes names and reasons; the console cuts long lists", "[accept]") {
  const std::vector<Node> nodes{{"a<&>", 100}, {"b\"'", 100}};
  Attempt failed;
  failed.status = Status::kFailed;
  failed.reason = "QP error\x01 <retry exceeded>";
  const std::vector<PairResult> results{{{0, 1}, 0, {failed}}};
  const Spec spec;
  const Judgement j = judge(spec, nodes, results);
  const std::string xml = report_junit({spec, nodes, results, j});
  CHECK_THAT(xml, Catch::Matchers::Contains("name=\"0-1 (a&lt;&amp;&gt;-b&quot;&apos;)\""));
  CHECK_THAT(
      xml, Catch::Matchers::Contains("<failure type=\"status\" message=\"failed: QP error? &lt;retry exceeded&gt;\">"));

  // A node bad with 29 partners: 20 failed pairs listed, then a count.
  std::vector<Node> many;
  std::vector<PairResult> pairs;
  for (std::uint32_t i = 0; i < 30; ++i) many.push_back({"", 100});
  for (const auto& round : round_robin(30).rounds) {
    for (const Pair p : round) {
      Attempt at;
      at.bw_a_to_b_gbps = p.a == 7 || p.b == 7 ? 10 : 95;
      pairs.push_back({p, 0, {at}});
    }
  }
  Spec once;
  once.retests = 0;
  const Judgement k = judge(once, many, pairs);
  const std::string text = report_text({once, many, pairs, k});
  CHECK(text.starts_with("fabench-accept: FAIL: 30 nodes, 435 pairs: 406 pass, 0 flaky, 29 fail\n"));
  CHECK_THAT(text, Catch::Matchers::Contains("culprits:\n  node 7: bad in 29 of its 29 pairs"));
  CHECK(text.ends_with("  ... and 9 more (the JSON report lists every pair)\n"));
}
