// Schedules: the circle method, bisection rounds and first-fit packing into disjoint rounds.
#include "fabench/accept/schedule.hpp"

#include <algorithm>
#include <bit>
#include <unordered_map>

#include <fmt/format.h>

#include "detail.hpp"
#include "fabench/accept/error.hpp"

namespace fabench::accept {

namespace {

void check_node_count(std::uint32_t n) {
  if (n < 2 || n > kMaxNodes) {
    throw AcceptError(fmt::format("node count {} is outside 2..{}", n, kMaxNodes));
  }
}

Pair ordered(std::uint32_t x, std::uint32_t y) { return x < y ? Pair{x, y} : Pair{y, x}; }

std::uint64_t pair_key(Pair p) { return detail::pair_key(p.a, p.b); }

// Per node, a bit per round it is busy in; first_free() finds the earliest round free for both.
class Occupancy {
 public:
  explicit Occupancy(std::uint32_t n) : busy_(n) {}

  std::size_t first_free(Pair p) const {
    const auto& x = busy_[p.a];
    const auto& y = busy_[p.b];
    const std::size_t words = std::max(x.size(), y.size());
    for (std::size_t w = 0; w < words; ++w) {
      const std::uint64_t used = (w < x.size() ? x[w] : 0) | (w < y.size() ? y[w] : 0);
      if (used != ~std::uint64_t{0}) return w * 64 + static_cast<std::size_t>(std::countr_one(used));
    }
    return words * 64;
  }

  void take(std::uint32_t node, std::size_t round) {
    auto& bits = busy_[node];
    if (bits.size() <= round / 64) bits.resize(round / 64 + 1, 0);
    bits[round / 64] |= std::uint64_t{1} << (round % 64);
  }

 private:
  std::vector<std::vector<std::uint64_t>> busy_;
};

}  // namespace

std::size_t Schedule::pair_count() const {
  std::size_t total = 0;
  for (const auto& r : rounds) total += r.size();
  return total;
}

Schedule round_robin(std::uint32_t n) {
  check_node_count(n);
  // Circle method on an even count m: node m-1 stays put, the others rotate; in round r node r
  // meets m-1 and (r+k) meets (r-k) mod (m-1). For odd n, m = n + 1 and whoever meets the extra
  // node idles.
  const std::uint32_t m = n % 2 == 0 ? n : n + 1;
  const std::uint32_t ring = m - 1;
  Schedule s{n, {}};
  s.rounds.resize(ring);
  for (std::uint32_t r = 0; r < ring; ++r) {
    auto& round = s.rounds[r];
    round.reserve(m / 2);
    if (ring < n) round.push_back(ordered(r, ring));
    for (std::uint32_t k = 1; k < m / 2; ++k) round.push_back(ordered((r + k) % ring, (r + ring - k) % ring));
  }
  return s;
}

Schedule bisection(std::uint32_t n) {
  check_node_count(n);
  const std::uint32_t lower = n / 2;
  const std::uint32_t upper = n - lower;
  Schedule s{n, {}};
  s.rounds.resize(upper);
  for (std::uint32_t r = 0; r < upper; ++r) {
    s.rounds[r].reserve(lower);
    for (std::uint32_t i = 0; i < lower; ++i) s.rounds[r].push_back({i, lower + (i + r) % upper});
  }
  return s;
}

Schedule pack_rounds(std::uint32_t n, std::span<const Pair> pairs) {
  check_node_count(n);
  Schedule s{n, {}};
  Occupancy busy(n);
  std::unordered_map<std::uint64_t, std::size_t> seen;
  seen.reserve(pairs.size());
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const Pair p = pairs[i];
    if (p.a >= n || p.b >= n) throw AcceptError(fmt::format("pair {} {}: node out of range 0..{}", p.a, p.b, n - 1));
    if (p.a == p.b) throw AcceptError(fmt::format("pair {} {}: a node paired with itself", p.a, p.b));
    if (!seen.emplace(pair_key(p), i).second) throw AcceptError(fmt::format("pair {} {} is given twice", p.a, p.b));
    const std::size_t r = busy.first_free(p);
    if (r == s.rounds.size()) s.rounds.emplace_back();
    s.rounds[r].push_back(p);
    busy.take(p.a, r);
    busy.take(p.b, r);
  }
  return s;
}

Schedule retest_schedule(const Schedule& original, std::span<const Pair> pairs) {
  std::unordered_map<std::uint64_t, std::size_t> round_of;
  round_of.reserve(original.pair_count());
  for (std::size_t r = 0; r < original.rounds.size(); ++r) {
    for (const Pair p : original.rounds[r]) round_of.emplace(pair_key(p), r);
  }
  std::vector<std::vector<Pair>> grouped(original.rounds.size());
  for (const Pair p : pairs) {
    const auto it = round_of.find(pair_key(p));
    if (it == round_of.end())
      throw AcceptError(fmt::format("retest of pair {} {}, which is not in the schedule", p.a, p.b));
    grouped[it->second].push_back(p);
  }
  std::erase_if(grouped, [](const auto& g) { return g.empty(); });
  Schedule packed = pack_rounds(original.nodes, pairs);
  if (packed.rounds.size() <= grouped.size()) return packed;
  return Schedule{original.nodes, std::move(grouped)};
}

}  // namespace fabench::accept
