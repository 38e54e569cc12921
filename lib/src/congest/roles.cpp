#include "fabench/congest/roles.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "fabench/base/error.hpp"
#include "fabench/base/mix.hpp"

namespace fabench::congest {

namespace {

std::uint32_t parse_rank(std::string_view token, std::string_view list, std::uint32_t ranks) {
  std::uint32_t v = 0;
  const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
  if (token.empty() || ec != std::errc() || ptr != token.data() + token.size()) {
    throw UserError(fmt::format("rank list \"{}\": \"{}\" is not a rank", list, token));
  }
  if (v >= ranks) throw UserError(fmt::format("rank list \"{}\": rank {} is outside 0..{}", list, v, ranks - 1));
  return v;
}

Roles split(std::uint32_t ranks, std::vector<std::uint32_t> congestors) {
  std::sort(congestors.begin(), congestors.end());
  Roles r;
  r.congestors = std::move(congestors);
  for (std::uint32_t k = 0; k < ranks; ++k) {
    if (!std::binary_search(r.congestors.begin(), r.congestors.end(), k)) r.victims.push_back(k);
  }
  if (r.congestors.empty()) throw UserError(fmt::format("{} ranks and no congestor: nothing would load the fabric", ranks));
  if (r.victims.size() < 2) {
    throw UserError(fmt::format("{} ranks with {} congestors leave {} victim(s); the victim tests need two at least",
                                ranks, r.congestors.size(), r.victims.size()));
  }
  return r;
}

// A seeded Fisher-Yates shuffle (the same order on every host).
std::vector<std::uint32_t> shuffled(std::vector<std::uint32_t> v, std::uint64_t seed) {
  std::uint64_t s = seed;
  for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[draw_below(s, i)]);
  return v;
}

}  // namespace

bool Roles::is_victim(std::uint32_t rank) const { return std::binary_search(victims.begin(), victims.end(), rank); }

std::vector<std::uint32_t> parse_rank_list(std::string_view list, std::uint32_t ranks) {
  std::vector<std::uint32_t> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string_view token = list.substr(start, comma - start);
    const std::size_t dash = token.find('-');
    const std::uint32_t lo = parse_rank(token.substr(0, dash), list, ranks);
    const std::uint32_t hi = dash == std::string_view::npos ? lo : parse_rank(token.substr(dash + 1), list, ranks);
    if (hi < lo) throw UserError(fmt::format("rank list \"{}\": range {} runs backwards", list, token));
    for (std::uint32_t k = lo; k <= hi; ++k) out.push_back(k);
    start = comma + 1;
  }
  std::sort(out.begin(), out.end());
  if (const auto dup = std::adjacent_find(out.begin(), out.end()); dup != out.end()) {
    throw UserError(fmt::format("rank list \"{}\": rank {} appears twice", list, *dup));
  }
  return out;
}

Roles choose_roles(std::uint32_t ranks, double fraction, std::uint64_t seed) {
  if (!(fraction > 0 && fraction < 1)) {
    throw UserError(fmt::format("--congestors {} is not a fraction between 0 and 1 (exclusive)", fraction));
  }
  const auto n = static_cast<std::uint32_t>(std::lround(fraction * ranks));
  std::vector<std::uint32_t> all(ranks);
  std::iota(all.begin(), all.end(), 0U);
  all = shuffled(std::move(all), seed);
  all.resize(n);
  return split(ranks, std::move(all));
}

Roles named_roles(std::uint32_t ranks, std::span<const std::uint32_t> congestors) {
  for (const auto c : congestors) {
    if (c >= ranks) throw UserError(fmt::format("congestor rank {} is outside 0..{}", c, ranks - 1));
  }
  return split(ranks, {congestors.begin(), congestors.end()});
}

std::string rank_ranges(std::span<const std::uint32_t> ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j == i ? fmt::format("{}", ranks[i]) : fmt::format("{}-{}", ranks[i], ranks[j]);
    i = j + 1;
  }
  return out;
}

std::string describe(const Roles& roles) {
  return fmt::format("victims {} ({}); congestors {} ({})", rank_ranges(roles.victims), roles.victims.size(),
                     rank_ranges(roles.congestors), roles.congestors.size());
}

Ring::Ring(std::span<const std::uint32_t> members, std::uint64_t seed, std::uint32_t round)
    : order_(shuffled({members.begin(), members.end()}, seed ^ (0x5851f42d4c957f2dull * (round + 1ULL)))) {
  if (order_.size() < 2) throw UserError(fmt::format("a ring needs two members at least, not {}", order_.size()));
}

std::size_t Ring::position(std::uint32_t rank) const {
  const auto it = std::find(order_.begin(), order_.end(), rank);
  if (it == order_.end()) throw UserError(fmt::format("rank {} is not on the ring", rank));
  return static_cast<std::size_t>(it - order_.begin());
}

std::uint32_t Ring::next_of(std::uint32_t rank) const { return order_[(position(rank) + 1) % order_.size()]; }

std::uint32_t Ring::prev_of(std::uint32_t rank) const {
  return order_[(position(rank) + order_.size() - 1) % order_.size()];
}

}  // namespace fabench::congest
