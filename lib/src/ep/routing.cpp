#include "fabench/ep/routing.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <numeric>

#include <fmt/format.h>

#include "fabench/ep/error.hpp"
#include "mix.hpp"

namespace fabench::ep {

namespace {

double parse_number(std::string_view text, std::string_view spec) {
  double v = 0;
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || !std::isfinite(v)) {
    fail(fmt::format("--skew {}: \"{}\" is not a number", spec, text));
  }
  return v;
}

}  // namespace

Skew parse_skew(std::string_view s) {
  if (s == "none" || s.empty()) return {};
  const auto colon = s.find(':');
  const std::string_view kind = s.substr(0, colon);
  if (colon == std::string_view::npos) fail(fmt::format("--skew {}: expected KIND:VALUE (hot-expert:R, hot-rank:R, zipf:S) or none", s));
  const double v = parse_number(s.substr(colon + 1), s);
  if (kind == "hot-expert" || kind == "hot-rank") {
    if (v < 1) fail(fmt::format("--skew {}: R must be at least 1", s));
    return {kind == "hot-rank" ? SkewKind::kHotRank : SkewKind::kHotExpert, v};
  }
  if (kind == "zipf") {
    if (!(v > 0 && v <= 4)) fail(fmt::format("--skew {}: S must be in (0, 4]", s));
    return {SkewKind::kZipf, v};
  }
  fail(fmt::format("--skew {}: unknown kind \"{}\" (hot-expert, hot-rank, zipf or none)", s, kind));
}

std::string skew_name(const Skew& s) {
  switch (s.kind) {
    case SkewKind::kNone: return "none";
    case SkewKind::kHotExpert: return fmt::format("hot-expert:{}", s.value);
    case SkewKind::kHotRank: return fmt::format("hot-rank:{}", s.value);
    case SkewKind::kZipf: return fmt::format("zipf:{}", s.value);
  }
  return "?";
}

namespace {

void parse_replay_line(std::string_view line, const std::string& where, const MoeShape& m, Replay& r) {
  std::vector<std::uint16_t> ids;
  std::size_t i = 0;
  while (i < line.size()) {
    if (line[i] == ' ' || line[i] == ',' || line[i] == '\t' || line[i] == '\r') {
      ++i;
      continue;
    }
    std::uint32_t v = 0;
    const auto [p, ec] = std::from_chars(line.data() + i, line.data() + line.size(), v);
    if (ec != std::errc() || v >= m.experts) {
      fail(fmt::format("{}: expert ids are integers in 0..{}", where, m.experts - 1));
    }
    ids.push_back(static_cast<std::uint16_t>(v));
    i = static_cast<std::size_t>(p - line.data());
  }
  if (ids.size() != m.top_k) fail(fmt::format("{}: {} experts, the model routes to {}", where, ids.size(), m.top_k));
  auto sorted = ids;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) fail(fmt::format("{}: an expert twice", where));
  r.ids.insert(r.ids.end(), ids.begin(), ids.end());
}

}  // namespace

Replay load_replay(const std::filesystem::path& path, const MoeShape& m) {
  std::ifstream in(path);
  if (!in) fail(fmt::format("{}: cannot open (no such file, or not readable)", path.string()));
  Replay r;
  r.top_k = m.top_k;
  std::string line;
  for (std::size_t n = 1; std::getline(in, line); ++n) {
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    parse_replay_line(line, fmt::format("{}:{}", path.string(), n), m, r);
  }
  if (r.ids.empty()) fail(fmt::format("{}: no routing lines", path.string()));
  return r;
}

Router::Router(const MoeShape& m, std::uint32_t ranks, Skew skew, std::uint64_t seed)
    : shape_(m), place_(m.experts, ranks), skew_(skew), seed_(seed) {
  validate(m);
  const double k = m.top_k;
  if (skew.kind == SkewKind::kHotExpert && skew.value * k / m.experts > 1) {
    fail(fmt::format("--skew {}: the hot expert would be picked by more than every token (R x top-k / experts = {:.3g} > 1)",
                     skew_name(skew), skew.value * k / m.experts));
  }
  if (skew.kind == SkewKind::kHotRank) {
    const double mean = skew.value * k / ranks;
    if (ranks < 2) fail(fmt::format("--skew {}: needs 2 or more ranks", skew_name(skew)));
    if (skew.value > ranks || mean > place_.count(hot_rank())) {
      fail(fmt::format("--skew {}: {} picks per token on one rank exceed what it can take (R <= ranks, R x top-k / ranks <= its {} experts)",
                       skew_name(skew), mean, place_.count(hot_rank())));
    }
    const std::uint32_t g = m.experts_per_group();
    const std::uint32_t span = (place_.first(hot_rank()) + place_.count(hot_rank()) - 1) / g - place_.first(hot_rank()) / g + 1;
    if (m.group_limited() && span > m.topk_group) {
      fail(fmt::format("--skew {}: the hot rank's experts span {} groups, more than topk_group ({})", skew_name(skew), span,
                       m.topk_group));
    }
  }
  if (skew.kind == SkewKind::kZipf) {
    std::vector<std::uint32_t> order(m.experts);
    std::iota(order.begin(), order.end(), 0u);
    std::uint64_t s = seed ^ 0x5eedull;
    for (std::uint32_t i = m.experts - 1; i > 0; --i) std::swap(order[i], order[detail::mix(s) % (i + 1)]);
    std::vector<double> w(m.experts);
    for (std::uint32_t i = 0; i < m.experts; ++i) w[order[i]] = 1.0 / std::pow(i + 1.0, skew.value);
    cumulative_.resize(m.experts);
    std::partial_sum(w.begin(), w.end(), cumulative_.begin());
  }
  init_group_weights();
}

Router::Router(const MoeShape& m, std::uint32_t ranks, Replay replay)
    : shape_(m), place_(m.experts, ranks), replay_(std::move(replay)) {
  validate(m);
  if (replay_.top_k != m.top_k || replay_.ids.empty()) fail("routing replay does not match the model's top-k");
}

}  // namespace fabench::ep
