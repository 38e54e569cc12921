// report_text: the console summary: verdict and counts, fleet medians, culprits, flaky and failed
// pairs (long lists cut at kListedPairs, the JSON report has them all).
#include <fmt/format.h>

#include "detail.hpp"
#include "fabench/accept/report.hpp"

namespace fabench::accept {

namespace {

constexpr std::size_t kListedPairs = 20;

std::string reasons(const std::vector<Violation>& v) {
  std::string out;
  for (const auto& x : v) out += (out.empty() ? "" : "; ") + x.text;
  return out;
}

std::string fleet_line(const Judgement& j) {
  constexpr const char* kLabels[kMetrics] = {"bw a->b", "bw b->a", "bidir", "lat p50"};
  std::string out;
  for (std::size_t m = 0; m < kMetrics; ++m) {
    const FleetStat& f = j.fleet[m];
    if (f.count == 0) continue;
    out += fmt::format("{}{} {} {} (MAD {})", out.empty() ? "" : ", ", kLabels[m], detail::num(f.median),
                       m == static_cast<std::size_t>(Metric::kLatP50) ? "us" : "Gb/s", detail::num(f.mad));
  }
  return out.empty() ? "" : "fleet medians: " + out + "\n";
}

void list_pairs(const Report& r, Verdict which, std::string& out) {
  std::size_t shown = 0;
  std::size_t total = 0;
  for (std::size_t i = 0; i < r.results.size(); ++i) {
    const PairVerdict& v = r.judgement.pairs[i];
    if (v.verdict != which) continue;
    if (++total > kListedPairs) continue;
    ++shown;
    const auto& first_bad = which == Verdict::kFlaky ? v.attempts.front() : v.attempts.back();
    const std::string detail = which == Verdict::kFlaky
                                   ? fmt::format("{}; passed on attempt {}", reasons(first_bad), v.attempts.size())
                                   : reasons(first_bad);
    out += fmt::format("  {}: {}\n", pair_label(r.nodes, r.results[i].pair), detail);
  }
  if (total > shown) out += fmt::format("  ... and {} more (the JSON report lists every pair)\n", total - shown);
}

}  // namespace

std::string report_text(const Report& r) {
  const Judgement& j = r.judgement;
  std::string out = fmt::format("fabench-accept: {}: {} nodes, {} pairs: {} pass, {} flaky, {} fail\n",
                                j.ok() ? "PASS" : "FAIL", r.nodes.size(), r.results.size(), j.passed, j.flaky,
                                j.failed);
  if (!j.retest.empty()) out += fmt::format("{} failed pairs still have a retest left\n", j.retest.size());
  out += fleet_line(j);
  if (!j.culprits.empty()) out += "culprits:\n";
  for (const Culprit& c : j.culprits) {
    if (&c - j.culprits.data() == static_cast<std::ptrdiff_t>(kListedPairs)) {
      out += fmt::format("  ... and {} more\n", j.culprits.size() - kListedPairs);
      break;
    }
    out += fmt::format("  {}\n", c.evidence);
  }
  if (j.flaky > 0) out += "flaky (passed on retest):\n";
  list_pairs(r, Verdict::kFlaky, out);
  if (j.failed > 0) out += "failed:\n";
  list_pairs(r, Verdict::kFail, out);
  return out;
}

}  // namespace fabench::accept
