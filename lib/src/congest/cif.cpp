#include "fabench/congest/cif.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace fabench::congest {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Nearest rank of ascending `v` (non-empty): the value with `fraction` of the samples at or below it.
double nearest_rank(const std::vector<double>& v, double fraction) {
  const auto n = static_cast<double>(v.size());
  const auto k = static_cast<std::size_t>(std::max(1.0, std::ceil(fraction * n - 1e-9)));
  return v[std::min(k, v.size()) - 1];
}

double ratio(double num, double den) { return num > 0 && den > 0 ? num / den : kNaN; }

double median(std::vector<double> v) {
  std::erase_if(v, [](double x) { return std::isnan(x); });
  if (v.empty()) return kNaN;
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 == 1 ? v[h] : (v[h - 1] + v[h]) / 2;
}

}  // namespace

Summary summarize(std::vector<double> samples, Metric metric) {
  Summary s;
  s.samples = samples.size();
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
  const bool low_is_worse = metric == Metric::kBandwidth;
  s.median = nearest_rank(samples, 0.5);
  s.tail90 = nearest_rank(samples, low_is_worse ? 0.1 : 0.9);
  s.tail99 = nearest_rank(samples, low_is_worse ? 0.01 : 0.99);
  s.tail999 = nearest_rank(samples, low_is_worse ? 0.001 : 0.999);
  return s;
}

Cif cif(Metric metric, const Summary& isolated, const Summary& loaded) {
  if (isolated.samples == 0 || loaded.samples == 0) return {kNaN, kNaN};
  if (metric == Metric::kLatency) return {ratio(loaded.mean, isolated.mean), ratio(loaded.tail99, isolated.tail99)};
  return {ratio(isolated.mean, loaded.mean), ratio(isolated.tail99, loaded.tail99)};
}

Attribution attribute(std::span<const VictimCif> victims, std::span<const std::string> receiving_ports,
                      double threshold, double contrast) {
  Attribution a;
  std::vector<double> behind;
  std::vector<double> elsewhere;
  std::map<std::string, std::vector<double>> by_port;
  for (const auto& v : victims) {
    const bool hit = std::any_of(receiving_ports.begin(), receiving_ports.end(),
                                 [&](const std::string& p) { return v.touches(p); });
    (hit ? a.behind : a.elsewhere).push_back(v.rank);
    (hit ? behind : elsewhere).push_back(v.cif.tail99);
    by_port[v.port].push_back(v.cif.tail99);
    if (!v.peer_port.empty() && v.peer_port != v.port) by_port[v.peer_port].push_back(v.cif.tail99);
  }
  for (auto* ranks : {&a.behind, &a.elsewhere}) {
    std::sort(ranks->begin(), ranks->end());
    ranks->erase(std::unique(ranks->begin(), ranks->end()), ranks->end());
  }
  a.behind_tail99 = median(behind);
  a.elsewhere_tail99 = median(elsewhere);
  // The hot port: the one whose paths fare worst, named only when it stands out.
  std::string worst;
  double worst_cif = kNaN;
  for (const auto& [port, cifs] : by_port) {
    const double m = median(cifs);
    if (!std::isnan(m) && (std::isnan(worst_cif) || m > worst_cif)) {
      worst = port;
      worst_cif = m;
    }
  }
  if (worst.empty() || !(worst_cif > threshold)) return a;
  // It stands out in the tail and in the mean alike: a congested queue on a port slows every
  // sample through it, while one stray slow sample per path moves only a tail.
  const auto stands_out = [&](auto figure) {
    std::vector<double> through, rest;
    for (const auto& v : victims) (v.touches(worst) ? through : rest).push_back(figure(v.cif));
    const double t = median(through);
    const double r = median(rest);
    return t > threshold && !std::isnan(r) && t >= contrast * r;  // no path avoids it: no contrast
  };
  if (stands_out([](const Cif& c) { return c.tail99; }) && stands_out([](const Cif& c) { return c.mean; })) {
    a.hot_port = worst;
  }
  return a;
}

std::vector<std::uint32_t> ranks_with_moved_counters(std::span<const CounterDeltas> per_rank) {
  std::vector<std::uint32_t> out;
  for (std::size_t r = 0; r < per_rank.size(); ++r) {
    const bool moved = std::any_of(per_rank[r].begin(), per_rank[r].end(), [](const auto& kv) { return kv.second != 0; });
    if (moved) out.push_back(static_cast<std::uint32_t>(r));
  }
  return out;
}

}  // namespace fabench::congest
