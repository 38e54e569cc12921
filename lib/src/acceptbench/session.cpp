// fabench-accept's session (session.hpp): rank 0's rounds over the session protocol, the
// halves of each pair put together, the reports; the followers run the same PairJob.
#include "fabench/acceptbench/session.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "fabench/accept/budget.hpp"
#include "fabench/accept/error.hpp"
#include "fabench/accept/judge.hpp"
#include "fabench/accept/report.hpp"
#include "fabench/accept/result_json.hpp"
#include "fabench/base/error.hpp"
#include "fabench/ctrl/wire.hpp"
#include "fabench/sysinfo/format.hpp"
#include "fabench/world/driver.hpp"

namespace fabench::acceptbench {

namespace {

using accept::Attempt;
using accept::Pair;
using accept::PairResult;
using accept::Status;
using nlohmann::json;

// One end's half of a pair as rank 0 reads it from the end's report.
struct Half {
  std::optional<Attempt> attempt;  // what it measured
  std::string failure;             // or its own failure (job.hpp)
  int stage = 3;                   // of the failure: 0 set-up, 1 connect, 2 run
  std::string lost;                // or why its rank is lost
};

Half read_half(const world::RankReport& r, const std::string& who) {
  Half h;
  if (r.lost) {
    h.lost = r.error;
    return h;
  }
  if (!r.ok) {
    h.failure = fmt::format("{}: {}", who, r.error);
    h.stage = 2;
    return h;
  }
  try {
    const json j = json::parse(r.json);
    if (j.contains("failure")) {
      h.failure = j.at("failure").get<std::string>();
      h.stage = j.at("stage").get<int>();
    } else {
      h.attempt = accept::attempt_from_json(j, who);
    }
  } catch (const std::exception& e) {
    h.failure = fmt::format("{}: {}", who, e.what());
    h.stage = 2;
  }
  return h;
}

// The attempt of one pair from its two halves: a lost end makes it a timeout (with the other
// end's measurements where it took them), a failure of an end a failure.
Attempt pair_attempt(const Half (&h)[2], std::uint32_t lanes, double secs) {
  const std::string& lost = h[0].lost.empty() ? h[1].lost : h[0].lost;
  const Half& first = h[1].stage < h[0].stage ? h[1] : h[0];
  if (first.failure.empty()) {
    return combine(h[0].attempt ? &*h[0].attempt : nullptr, h[1].attempt ? &*h[1].attempt : nullptr, lanes, secs,
                   lost.empty() ? "no answer" : lost);
  }
  Attempt a = combine(nullptr, nullptr, lanes, secs, lost.empty() ? first.failure : lost);
  if (lost.empty()) a.status = Status::kFailed;  // else a timeout
  return a;
}

// Rank 0's rounds: each one run of the session protocol over every rank.
class Rounds {
 public:
  Rounds(ctrl::Bootstrap& boot, world::Leader& driver, const RunSettings& s) : boot_(boot), s_(s), driver_(driver) {}

  // Measures `pairs` (disjoint) as one round; returns one attempt per pair.
  std::vector<Attempt> round(const std::vector<Pair>& pairs, std::size_t round_no) {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<Attempt> out(pairs.size());
    std::vector<Pair> live;
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      const std::string gone = driver_.lost(pairs[i].a).empty() ? driver_.lost(pairs[i].b) : driver_.lost(pairs[i].a);
      if (!gone.empty()) out[i] = combine(nullptr, nullptr, s_.link.lanes, 0, "not run: " + gone);
      if (gone.empty()) live.push_back(pairs[i]);
    }
    const world::Outcome o = driver_.run(round_no, 1, PairJob::round_params(live));
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      const Pair p = pairs[i];
      if (std::find(live.begin(), live.end(), p) == live.end()) continue;
      if (!o.ok) {
        out[i] = combine(nullptr, nullptr, s_.link.lanes, secs, o.error);
        out[i].status = Status::kFailed;
        continue;
      }
      const Half h[2] = {read_half(o.ranks[p.a], boot_.describe_rank(p.a)),
                         read_half(o.ranks[p.b], boot_.describe_rank(p.b))};
      out[i] = pair_attempt(h, s_.link.lanes, secs);
    }
    return out;
  }
  void finish() { driver_.finish(); }

 private:
  ctrl::Bootstrap& boot_;
  const RunSettings& s_;
  world::Leader& driver_;
};

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  if (!f.flush()) throw RunError(fmt::format("cannot write {}", path));
}

std::string round_line(const std::vector<accept::Node>& nodes, Pair p, const Attempt& a) {
  auto g = [](double v) { return std::isnan(v) ? std::string("-") : fmt::format("{:.2f}", v); };
  if (a.status != Status::kOk) {
    return fmt::format("  {}: {} ({})", accept::pair_label(nodes, p), accept::status_name(a.status), a.reason);
  }
  return fmt::format("  {}: {} / {} / {} Gb/s (A->B / B->A / both), latency p50 {} us, p99 {} us",
                     accept::pair_label(nodes, p), g(a.bw_a_to_b_gbps), g(a.bw_b_to_a_gbps), g(a.bw_bidir_gbps),
                     g(a.lat_p50_us), g(a.lat_p99_us));
}

// Every round of the schedule, then the retests judge() asks for; the results by pair.
std::vector<PairResult> measure_all(Rounds& rounds, const accept::Spec& spec, const std::vector<accept::Node>& nodes,
                                    const accept::Schedule& schedule, accept::Judgement& j) {
  std::vector<PairResult> results;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::size_t> index;
  for (std::size_t r = 0; r < schedule.rounds.size(); ++r) {
    const auto& pairs = schedule.rounds[r];
    std::cerr << fmt::format("round {}/{}:\n", r + 1, schedule.rounds.size());
    auto attempts = rounds.round(pairs, r);
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      std::cerr << round_line(nodes, pairs[i], attempts[i]) << "\n";
      index[{pairs[i].a, pairs[i].b}] = results.size();
      results.push_back(PairResult{pairs[i], static_cast<std::uint32_t>(r), {std::move(attempts[i])}});
    }
  }
  j = accept::judge(spec, nodes, results);
  for (std::uint32_t wave = 1; !j.retest.empty(); ++wave) {
    const accept::Schedule again = accept::retest_schedule(schedule, j.retest);
    for (std::size_t r = 0; r < again.rounds.size(); ++r) {
      const auto& pairs = again.rounds[r];
      std::cerr << fmt::format("retest {}, round {}/{}:\n", wave, r + 1, again.rounds.size());
      auto attempts = rounds.round(pairs, r);
      for (std::size_t i = 0; i < pairs.size(); ++i) {
        std::cerr << round_line(nodes, pairs[i], attempts[i]) << "\n";
        auto it = index.find({pairs[i].a, pairs[i].b});
        if (it == index.end()) it = index.find({pairs[i].b, pairs[i].a});
        results[it->second].attempts.push_back(std::move(attempts[i]));
      }
    }
    j = accept::judge(spec, nodes, results);
  }
  return results;
}

// The text report on stdout, the JSON and JUnit files asked for.
void write_reports(const accept::Report& report, const harness::Context& ctx, const RunSettings& settings,
                   const LeadOutputs& outputs, std::size_t rounds, const accept::TimeSettings& ts, double secs) {
  std::cout << accept::report_text(report) << std::flush;
  std::cerr << fmt::format("fabench-accept: measured in {:.1f} s (bound {:.1f} s)\n", secs,
                           accept::run_upper_bound_s(ts));
  // Rank 0's interconnect record, as every other binary's report context has it (sysinfo/format.hpp).
  const auto record = sysinfo::to_json(sysinfo::read_record(), sysinfo::Form::kCompact);
  const json meta{{"tool", "fabench-accept"},
                  {"version", std::string(ctrl::build_version())},
                  {"schedule", outputs.pairs_file.empty() ? outputs.schedule : "pairs:" + outputs.pairs_file},
                  {"rounds", rounds},
                  {"qps", settings.link.lanes},
                  {"bw_bytes", settings.link.bw_bytes},
                  {"bw_seconds", settings.plan.seconds},
                  {"lat_iters", settings.plan.lat_iters},
                  {"bound_s", accept::run_upper_bound_s(ts)},
                  {"elapsed_s", secs},
                  {"device", ctx.device().name()},
                  {"interconnect", json::parse(sysinfo::dump(record))}};
  if (!outputs.json_path.empty()) write_file(outputs.json_path, accept::report_json(report, meta).dump(2) + "\n");
  if (!outputs.junit_path.empty()) write_file(outputs.junit_path, accept::report_junit(report));
}

}  // namespace

std::vector<accept::Node> gather_nodes(ctrl::Bootstrap& boot, const harness::Context& ctx) {
  const std::string mine =
      json{{"device", ctx.device().name()}, {"port", ctx.port().port_num}, {"gbps", ctx.port().rate_gbps}}.dump();
  const auto all = boot.allgather(std::span(reinterpret_cast<const std::uint8_t*>(mine.data()), mine.size()));
  std::vector<accept::Node> nodes;
  std::map<std::string, int> host_count;
  for (const auto& h : boot.hosts()) ++host_count[h];
  for (std::uint32_t r = 0; r < boot.size(); ++r) {
    const json j = json::parse(std::string(all[r].begin(), all[r].end()));
    const std::string& host = boot.hosts()[r];
    accept::Node n;
    n.name = host_count[host] > 1 ? fmt::format("{}:{}", host, j.at("device").get<std::string>()) : host;
    n.port_gbps = j.at("gbps").get<double>();
    nodes.push_back(std::move(n));
  }
  return nodes;
}

int lead(world::Leader& driver, ctrl::Bootstrap& boot, const harness::Context& ctx, const accept::Spec& spec,
         const RunSettings& settings, const LeadOutputs& outputs, const std::vector<accept::Node>& nodes,
         const accept::Schedule& schedule) {
  // A round's setup is two gathers (ready with the endpoints, then connected), each bounded by setup_s.
  const accept::TimeSettings ts{schedule.rounds.size(), settings.pair_s, settings.pair_timeout_s, 2 * settings.setup_s,
                                spec.retests};
  std::cerr << fmt::format("fabench-accept: {} nodes, {} pairs in {} rounds ({}); {}\n", nodes.size(),
                           schedule.pair_count(), schedule.rounds.size(),
                           outputs.pairs_file.empty() ? outputs.schedule : "--pairs " + outputs.pairs_file,
                           accept::describe_upper_bound(ts));
  const auto t_start = std::chrono::steady_clock::now();
  Rounds rounds(boot, driver, settings);
  accept::Judgement j;
  std::vector<PairResult> results = measure_all(rounds, spec, nodes, schedule, j);
  rounds.finish();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  write_reports(accept::Report{spec, nodes, results, j}, ctx, settings, outputs, schedule.rounds.size(), ts, secs);
  return j.ok() ? 0 : 1;
}

}  // namespace fabench::acceptbench
