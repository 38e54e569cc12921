// report_junit: one testcase per pair. A failed pair carries a <failure> whose message is the
// counting attempt's reasons and whose body lists every attempt; a flaky pair passes with its
// history in <system-out>; the culprits go into the suite's <system-out>.
#include <fmt/format.h>

#include "fabench/accept/report.hpp"

namespace fabench::accept {

namespace {

// Text for an attribute or element body. Control characters other than tab and newline are not
// allowed in XML 1.0; they become '?'.
std::string xml_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') ? '?' : c;
    }
  }
  return out;
}

std::string joined(const std::vector<Violation>& v) {
  std::string out;
  for (const auto& x : v) out += (out.empty() ? "" : "; ") + x.text;
  return out;
}

// "attempt 1: <reasons>" per attempt, "attempt 2: passed" for a good one.
std::string history(const PairVerdict& v) {
  std::string out;
  for (std::size_t k = 0; k < v.attempts.size(); ++k) {
    out += fmt::format("{}attempt {}: {}", k == 0 ? "" : "\n", k + 1,
                       v.attempts[k].empty() ? "passed" : joined(v.attempts[k]));
  }
  return out;
}

std::string testcase(const Report& r, std::size_t i) {
  const PairResult& pr = r.results[i];
  const PairVerdict& pv = r.judgement.pairs[i];
  double seconds = 0;
  for (const Attempt& at : pr.attempts) seconds += at.duration_s;
  std::string out = fmt::format("    <testcase classname=\"fabench-accept\" name=\"{}\" time=\"{:.3f}\"",
                                xml_escape(pair_label(r.nodes, pr.pair)), seconds);
  switch (pv.verdict) {
    case Verdict::kPass: return out + "/>\n";
    case Verdict::kFlaky:
      return out +
             fmt::format(">\n      <system-out>flaky:\n{}</system-out>\n    </testcase>\n", xml_escape(history(pv)));
    case Verdict::kFail:
      const auto& last = pv.attempts.back();
      return out + fmt::format(">\n      <failure type=\"{}\" message=\"{}\">{}</failure>\n    </testcase>\n",
                               rule_name(last.front().rule), xml_escape(joined(last)), xml_escape(history(pv)));
  }
  return out + "/>\n";
}

}  // namespace

std::string report_junit(const Report& r) {
  const Judgement& j = r.judgement;
  double seconds = 0;
  for (const PairResult& pr : r.results) {
    for (const Attempt& at : pr.attempts) seconds += at.duration_s;
  }
  const auto counts = fmt::format("tests=\"{}\" failures=\"{}\" errors=\"0\"", r.results.size(), j.failed);
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"fabench-accept\" {} time=\"{:.3f}\">\n", counts, seconds);
  out += fmt::format("  <testsuite name=\"fabench-accept\" {} skipped=\"0\" time=\"{:.3f}\">\n", counts, seconds);
  for (std::size_t i = 0; i < r.results.size(); ++i) out += testcase(r, i);
  if (!j.culprits.empty()) {
    std::string culprits;
    for (const Culprit& c : j.culprits) culprits += fmt::format("culprit {}\n", c.evidence);
    out += fmt::format("    <system-out>{}</system-out>\n", xml_escape(culprits));
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace fabench::accept
