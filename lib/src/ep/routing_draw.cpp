// Router's draws for one token: the skew's forced picks, the group limit, then the regular
// picks by weight among the experts still eligible (routing.hpp gives the rules).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "fabench/ep/error.hpp"
#include "fabench/ep/routing.hpp"
#include "mix.hpp"

namespace fabench::ep {

namespace {
constexpr int kRejections = 64;  // then the eligible experts are listed and drawn from directly
}  // namespace

struct Router::Draw {
  std::uint64_t state;
  std::vector<char> picked;  // per expert
  std::vector<char> group_on;
  double uniform() { return static_cast<double>(detail::mix(state) >> 11) * 0x1.0p-53; }
  std::uint32_t below(std::uint32_t n) { return static_cast<std::uint32_t>(((detail::mix(state) >> 32) * n) >> 32); }
};

double Router::weight(std::uint32_t e) const {
  if (cumulative_.empty()) return 1.0;
  return e == 0 ? cumulative_[0] : cumulative_[e] - cumulative_[e - 1];
}

bool Router::eligible(const Draw& d, std::uint32_t e) const {
  if (d.picked[e]) return false;
  if (shape_.group_limited() && !d.group_on[e / shape_.experts_per_group()]) return false;
  if (skew_.kind == SkewKind::kHotRank && place_.owner(e) == hot_rank()) return false;
  return !(skew_.kind == SkewKind::kHotExpert && e == hot_expert());
}

void Router::init_group_weights() {
  group_weight_.assign(shape_.n_group, 0.0);
  for (std::uint32_t e = 0; e < shape_.experts; ++e) {
    const bool fixed_out = (skew_.kind == SkewKind::kHotRank && place_.owner(e) == hot_rank()) ||
                           (skew_.kind == SkewKind::kHotExpert && e == hot_expert());
    if (!fixed_out) group_weight_[e / shape_.experts_per_group()] += weight(e);
  }
}

std::uint32_t Router::forced_picks(Draw& d, std::span<std::uint16_t> out) const {
  std::uint32_t n = 0;
  if (skew_.kind == SkewKind::kHotRank) {
    const std::uint32_t first = place_.first(hot_rank());
    const std::uint32_t count = place_.count(hot_rank());
    const double mean = skew_.value * shape_.top_k / place_.ranks();
    auto h = static_cast<std::uint32_t>(std::floor(mean));
    if (d.uniform() < mean - h) ++h;
    h = std::min({h, shape_.top_k, count});
    while (n < h) {
      std::uint32_t e = first + d.below(count);
      while (d.picked[e]) e = first + d.below(count);
      d.picked[e] = 1;
      out[n++] = static_cast<std::uint16_t>(e);
    }
  } else if (skew_.kind == SkewKind::kHotExpert) {
    if (d.uniform() < skew_.value * shape_.top_k / shape_.experts) {
      d.picked[hot_expert()] = 1;
      out[n++] = static_cast<std::uint16_t>(hot_expert());
    }
  }
  return n;
}

void Router::choose_groups(Draw& d, std::span<const std::uint16_t> forced) const {
  std::fill(d.group_on.begin(), d.group_on.end(), 0);
  std::uint32_t on = 0;
  for (const std::uint16_t e : forced) {
    char& g = d.group_on[e / shape_.experts_per_group()];
    on += g ? 0 : 1;
    g = 1;
  }
  while (on < shape_.topk_group) {
    double total = 0;
    for (std::uint32_t g = 0; g < shape_.n_group; ++g) total += d.group_on[g] ? 0.0 : group_weight_[g];
    if (total <= 0) break;
    double u = d.uniform() * total;
    std::uint32_t g = 0;
    for (; g + 1 < shape_.n_group; ++g) {
      if (d.group_on[g]) continue;
      if (u < group_weight_[g]) break;
      u -= group_weight_[g];
    }
    while (d.group_on[g] || group_weight_[g] <= 0) g = (g + 1) % shape_.n_group;  // rounding at the end
    d.group_on[g] = 1;
    ++on;
  }
}

std::uint32_t Router::draw_expert(Draw& d) const {
  const std::uint32_t experts = shape_.experts;
  for (int i = 0; i < kRejections; ++i) {
    std::uint32_t e = 0;
    if (cumulative_.empty()) {
      e = d.below(experts);
    } else {
      const double u = d.uniform() * cumulative_.back();
      e = static_cast<std::uint32_t>(std::upper_bound(cumulative_.begin(), cumulative_.end(), u) - cumulative_.begin());
      e = std::min(e, experts - 1);
    }
    if (eligible(d, e)) return e;
  }
  double total = 0;
  for (std::uint32_t e = 0; e < experts; ++e) total += eligible(d, e) ? weight(e) : 0.0;
  if (total <= 0) fail(fmt::format("model {}: no expert left to route a token to (the skew and the group limit exclude them all)", shape_.name));
  double u = d.uniform() * total;
  std::uint32_t last = 0;
  for (std::uint32_t e = 0; e < experts; ++e) {
    if (!eligible(d, e)) continue;
    last = e;
    if (u < weight(e)) return e;
    u -= weight(e);
  }
  return last;
}

void Router::route_token(Draw& d, std::span<std::uint16_t> out) const {
  std::uint32_t n = forced_picks(d, out);
  if (shape_.group_limited()) choose_groups(d, out.first(n));
  while (n < shape_.top_k) {
    const std::uint32_t e = draw_expert(d);
    d.picked[e] = 1;
    out[n++] = static_cast<std::uint16_t>(e);
  }
  for (const std::uint16_t e : out) d.picked[e] = 0;
}

Routing Router::route(std::uint32_t rank, std::uint32_t tokens) const {
  Routing r{tokens, shape_.top_k, std::vector<std::uint16_t>(std::size_t{tokens} * shape_.top_k)};
  if (!replay_.ids.empty()) {
    const std::size_t lines = replay_.lines();
    for (std::uint32_t t = 0; t < tokens; ++t) {
      const std::size_t line = (std::size_t{rank} * tokens + t) % lines;
      std::copy_n(replay_.ids.begin() + static_cast<std::ptrdiff_t>(line * shape_.top_k), shape_.top_k,
                  r.ids.begin() + static_cast<std::ptrdiff_t>(std::size_t{t} * shape_.top_k));
    }
    return r;
  }
  std::uint64_t state = seed_ * 0x9e3779b97f4a7c15ull + rank + 1;
  Draw d{detail::mix(state), std::vector<char>(shape_.experts), std::vector<char>(shape_.n_group)};
  for (std::uint32_t t = 0; t < tokens; ++t) {
    route_token(d, {r.ids.data() + std::size_t{t} * shape_.top_k, shape_.top_k});
  }
  return r;
}

}  // namespace fabench::ep
