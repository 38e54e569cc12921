// Rank 0 of fabench-congest: per benchmark, --rounds x (an isolated phase, then a loaded one);
// the pooled victim samples give the headline figures and CIF, each victim's own give the
// attribution to a port; the loaded phases' counter deltas name the ranks whose counters moved.
#include <algorithm>
#include <cmath>

#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fabench/congestbench/app.hpp"

namespace fabench::congestbench {

namespace {

std::vector<double> pooled(const std::vector<std::vector<double>>& by_rank) {
  std::vector<double> out;
  for (const auto& v : by_rank) out.insert(out.end(), v.begin(), v.end());
  return out;
}

void absorb_counters(const ctrl::Record& rec, congest::CounterDeltas& into) {
  for (const auto& f : rec.fields()) {
    if (f.name.rfind("ctr/", 0) == 0) into[f.name.substr(4)] += static_cast<std::int64_t>(std::get<double>(f.value));
  }
}

// The figures of both phases: the mean and the percentiles on the worse side. Latency (us, one
// way: half the round trip, as fabench-lat's write latency) and all-reduce (us per call): pN is
// the Nth percentile; bandwidth (GB/s): pN is the (100-N)th, so p99 is the worst 1 % as for
// latency.
void put_summaries(benchmark::State& state, congest::Metric metric, const congest::Summary& iso,
                   const congest::Summary& load) {
  const bool lat = metric == congest::Metric::kLatency;
  const char* unit = lat ? "_us" : "_GBps";
  const char* tails[] = {"_p50", "_p90", "_p99", "_p999"};
  for (const auto& [phase, sm] : {std::pair{"isolated", &iso}, std::pair{"loaded", &load}}) {
    state.counters[fmt::format("{}{}", phase, unit)] = sm->mean;
    const double values[] = {sm->median, sm->tail90, sm->tail99, sm->tail999};
    for (std::size_t i = 0; i < std::size(tails); ++i) {
      state.counters[fmt::format("{}{}{}", phase, tails[i], unit)] = values[i];
    }
  }
}

// Every rank's counter deltas that moved over the loaded phases, as rR/NAME, and the incast
// target's as target/NAME whether they moved or not (the N:1 check operators make).
void put_counter_deltas(benchmark::State& state, const std::vector<congest::CounterDeltas>& counters,
                        std::uint32_t target) {
  for (std::uint32_t r = 0; r < counters.size(); ++r) {
    for (const auto& [name, delta] : counters[r]) {
      if (delta != 0) state.counters[fmt::format("r{}/{}", r, name)] = static_cast<double>(delta);
      if (r == target) state.counters["target/" + name] = static_cast<double>(delta);
    }
  }
}

}  // namespace

std::string CongestJob::port_of(std::uint32_t rank) const {
  const harness::ContextOptions o = world::context_for_rank(c_.dev, rank);
  const std::string dev = o.device.empty() ? "first-active" : o.device;
  return o.ib_port == 0 ? dev : fmt::format("{}/{}", dev, o.ib_port);
}

bool CongestJob::phase(world::Leader& driver, std::size_t index, bool loaded, std::uint32_t round, Phases& ph,
                       std::string& error) {
  const double ramp_s = c_.ramp_ms / 1e3;
  // The congestors' bound should the stop flag not come; within the driver's wait for results.
  if (loaded) {
    window_s_ = std::max({window_s_, ramp_s + c_.slack * ph.isolated_s + 1.0, c_.dev.timeout_s});
    window_s_ = std::min(window_s_, 2 * c_.dev.timeout_s);
  }
  const world::Params params{{"phase", loaded ? "loaded" : "isolated"},
                             {"round", std::to_string(round)},
                             {"seq", std::to_string(++seq_)},
                             {"window_ms", std::to_string(static_cast<std::int64_t>(window_s_ * 1e3))}};
  const world::Outcome out = driver.run(index, victim_iterations(c_, benches_.at(index).test), params);
  if (!out.ok) {
    error = out.error;
    return false;
  }
  double longest = 0, longest_victim = 0;
  for (std::uint32_t r = 0; r < out.ranks.size(); ++r) {
    const ctrl::Record& rec = out.ranks[r].record;
    const double s = rec.f64("seconds");
    longest = std::max(longest, s);
    if (rec.u64("victim") != 0) {
      const auto& samples = rec.list("samples");
      auto& into = (loaded ? ph.loaded : ph.isolated)[r * c_.rounds + round];
      into.insert(into.end(), samples.begin(), samples.end());
      longest_victim = std::max(longest_victim, s);
      if (loaded && ramp_s + s > window_s_) ++ph.uncovered;
      ph.wrong += rec.u64("wrong");
    } else if (loaded) {
      ph.congestor_ops += rec.u64("ops");
      ph.congestor_bytes += rec.u64("bytes");
      ph.congestor_seconds += s;
    }
    if (loaded) absorb_counters(rec, ph.counters[r]);
  }
  if (!loaded) ph.isolated_s = longest_victim;
  ph.seconds += longest;
  return true;
}

void CongestJob::bench(benchmark::State& state, std::size_t index, world::Leader& driver) {
  Phases ph;
  ph.isolated.resize(static_cast<std::size_t>(ranks_) * c_.rounds);
  ph.loaded.resize(static_cast<std::size_t>(ranks_) * c_.rounds);
  ph.counters.resize(ranks_);
  window_s_ = 0;
  for (auto _ : state) {
    for (std::uint32_t round = 0; round < c_.rounds; ++round) {
      std::string error;
      if (!phase(driver, index, false, round, ph, error) || !phase(driver, index, true, round, ph, error)) {
        fail(state, error);
        return;
      }
    }
    state.SetIterationTime(ph.seconds);
  }
  report(state, index, ph);
}

// One path per victim and round (the round's ring gives its successor), and the port their CIF
// points at; `per_victim` gets each victim's CIF over all its samples ("0@rxe0:1.23"). The
// all-reduce has no path of its own (every call crosses every victim's): no port.
congest::Attribution CongestJob::attribution(const CongestBench& b, congest::Metric metric, const Phases& ph,
                                             std::vector<std::string>& per_victim) const {
  std::vector<congest::VictimCif> paths;
  for (const std::uint32_t v : roles_.victims) {
    std::vector<double> iso_v, load_v;
    for (std::uint32_t round = 0; round < c_.rounds; ++round) {
      const auto& i = ph.isolated[v * c_.rounds + round];
      const auto& l = ph.loaded[v * c_.rounds + round];
      const congest::Ring ring(roles_.victims, c_.seed, round);
      paths.push_back({v, port_of(v),
                       congest::cif(metric, congest::summarize(i, metric), congest::summarize(l, metric)),
                       port_of(ring.next_of(v))});
      iso_v.insert(iso_v.end(), i.begin(), i.end());
      load_v.insert(load_v.end(), l.begin(), l.end());
    }
    const congest::Cif c = congest::cif(metric, congest::summarize(iso_v, metric), congest::summarize(load_v, metric));
    per_victim.push_back(fmt::format("{}@{}:{:.2f}", v, port_of(v), c.tail99));
  }
  if (b.test == VictimTest::kAllReduce) return {};
  std::vector<std::string> receiving;
  for (const std::uint32_t r :
       congest::receiving_ranks(congest::congestor_flows(b.pattern, roles_, target_, b.senders))) {
    receiving.push_back(port_of(r));
  }
  return congest::attribute(paths, receiving);
}

void CongestJob::report(benchmark::State& state, std::size_t index, const Phases& ph) {
  const CongestBench& b = benches_.at(index);
  const auto metric = b.test == VictimTest::kBandwidth ? congest::Metric::kBandwidth : congest::Metric::kLatency;
  const congest::Summary iso = congest::summarize(pooled(ph.isolated), metric);
  const congest::Summary load = congest::summarize(pooled(ph.loaded), metric);
  const congest::Cif all = congest::cif(metric, iso, load);
  std::vector<std::string> per_victim;
  const congest::Attribution a = attribution(b, metric, ph, per_victim);
  const auto moved = congest::ranks_with_moved_counters(ph.counters);
  put_summaries(state, metric, iso, load);
  state.counters["cif"] = all.mean;
  state.counters["cif_p99"] = all.tail99;
  if (b.test != VictimTest::kAllReduce) {
    state.counters["behind_cif_p99"] = a.behind_tail99;
    state.counters["elsewhere_cif_p99"] = a.elsewhere_tail99;
  }
  state.counters["samples"] = static_cast<double>(iso.samples + load.samples);
  state.counters["congestor_GBps"] =  // per congestor, over its loaded phases
      ph.congestor_seconds > 0 ? static_cast<double>(ph.congestor_bytes) / ph.congestor_seconds / 1e9 : 0;
  put_counter_deltas(state, ph.counters, target_);
  state.counters["uncovered"] = ph.uncovered;
  if (b.test == VictimTest::kAllReduce) state.counters["wrong"] = static_cast<double>(ph.wrong);
  state.counters["moved_ranks"] = static_cast<double>(moved.size());
  const std::string hot = b.test == VictimTest::kAllReduce ? "n/a (all-reduce)"
                          : a.hot_port.empty()             ? "none"
                                                           : a.hot_port;
  state.SetLabel(fmt::format(
      "hot port: {}; p99 CIF by victim {}; counters moved: {}{}", hot, fmt::join(per_victim, " "),
      moved.empty() ? "none" : "ranks " + congest::rank_ranges(moved),
      ph.uncovered > 0 ? fmt::format("; {} loaded victim phase(s) outlasted the congestors", ph.uncovered) : ""));
  if (iso.samples == 0 || load.samples == 0) fail(state, "a phase gave no victim samples");
  if (ph.wrong > 0) fail(state, fmt::format("all-reduce: {} output element(s) not the exact sum", ph.wrong));
}

}  // namespace fabench::congestbench
