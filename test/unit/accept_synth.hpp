// Synthetic fabric matrices for lib/accept's tests: every pair of a round-robin schedule with one
// good attempt whose values carry deterministic noise, and the ways to spoil them.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "fabench/accept/result.hpp"
#include "fabench/accept/schedule.hpp"

namespace accept_synth {

using namespace fabench::accept;

// splitmix64 of x, mapped to [-1, 1): noise that is the same on every platform.
inline double unit_noise(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  x ^= x >> 31;
  return static_cast<double>(x >> 11) / static_cast<double>(std::uint64_t{1} << 52) - 1.0;
}
// The sum of three: bell-shaped, within [-3, 3).
inline double bell_noise(std::uint64_t seed) {
  return unit_noise(3 * seed) + unit_noise(3 * seed + 1) + unit_noise(3 * seed + 2);
}

// A healthy 100 Gb/s pair: about 97 Gb/s each way (+-1.5), 192 both ways, 2 us p50, 3 us p99.
inline Attempt good_attempt(std::uint64_t seed) {
  Attempt a;
  a.duration_s = 2;
  a.bw_a_to_b_gbps = 97 + 0.5 * bell_noise(4 * seed);
  a.bw_b_to_a_gbps = 97 + 0.5 * bell_noise(4 * seed + 1);
  a.bw_bidir_gbps = 192 + 1.0 * bell_noise(4 * seed + 2);
  a.lat_p50_us = 2 + 0.03 * bell_noise(4 * seed + 3);
  a.lat_p99_us = 3 + 0.1 * bell_noise(4 * seed + 3);
  a.lat_max_us = 9;
  return a;
}

// A pair whose bandwidth is cut to `fraction` of a healthy one, both ways.
inline Attempt slow_attempt(std::uint64_t seed, double fraction) {
  Attempt a = good_attempt(seed);
  a.bw_a_to_b_gbps *= fraction;
  a.bw_b_to_a_gbps *= fraction;
  a.bw_bidir_gbps *= fraction;
  return a;
}

struct Fabric {
  std::vector<Node> nodes;
  Schedule schedule;
  std::vector<PairResult> results;
  std::unordered_map<std::uint64_t, std::size_t> index;  // pair key -> result

  PairResult& at(std::uint32_t a, std::uint32_t b) {
    return results[index.at((std::uint64_t{std::min(a, b)} << 32) | std::max(a, b))];
  }
  std::size_t index_of(std::uint32_t a, std::uint32_t b) const {
    return index.at((std::uint64_t{std::min(a, b)} << 32) | std::max(a, b));
  }
};

// n nodes "h0".."h<n-1>" at 100 Gb/s, all pairs by round_robin(n), each with one good attempt.
inline Fabric healthy_fabric(std::uint32_t n) {
  Fabric f;
  for (std::uint32_t i = 0; i < n; ++i) f.nodes.push_back({"h" + std::to_string(i), 100});
  f.schedule = round_robin(n);
  f.results.reserve(f.schedule.pair_count());
  f.index.reserve(f.schedule.pair_count());
  for (std::uint32_t r = 0; r < f.schedule.rounds.size(); ++r) {
    for (const Pair p : f.schedule.rounds[r]) {
      f.index.emplace((std::uint64_t{p.a} << 32) | p.b, f.results.size());
      f.results.push_back({p, r, {good_attempt(f.results.size())}});
    }
  }
  return f;
}

}  // namespace accept_synth
