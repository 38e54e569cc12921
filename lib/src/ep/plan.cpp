#include "fabench/ep/plan.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "fabench/ep/error.hpp"
#include "fabench/kv/plan.hpp"

namespace fabench::ep {

std::string_view mode_name(Mode m) { return m == Mode::kLowLatency ? "low-latency" : "normal"; }

Mode parse_mode(std::string_view s) {
  if (s == "normal") return Mode::kNormal;
  if (s == "low-latency" || s == "ll") return Mode::kLowLatency;
  fail(fmt::format("unknown mode \"{}\" (normal or low-latency)", s));
}

void validate(const EpConfig& c) {
  validate(c.shape);
  if (c.ranks == 0 || c.ranks > c.shape.experts) {
    fail(fmt::format("{} ranks: {} has {} routed experts, at least one per rank", c.ranks, c.shape.name, c.shape.experts));
  }
  if (c.ranks_per_node == 0 || c.ranks % c.ranks_per_node != 0) {
    fail(fmt::format("--ranks-per-node {} does not divide the {} ranks", c.ranks_per_node, c.ranks));
  }
  if (c.tokens == 0 || c.tokens > kMaxTokens) fail(fmt::format("--tokens {} is not in 1..{}", c.tokens, kMaxTokens));
}

std::uint32_t EpPlan::recv_copies_max() const {
  std::uint32_t m = 0;
  for (const auto& r : ranks) m = std::max(m, r.recv_copies);
  return m;
}

double EpPlan::recv_copies_mean() const {
  double sum = 0;
  for (const auto& r : ranks) sum += r.recv_copies;
  return ranks.empty() ? 0.0 : sum / static_cast<double>(ranks.size());
}

namespace {

enum class Hop : std::uint8_t { kLocal, kIntra, kFabric };

// One dispatch hop a -> b of one copy, and its combine hop back.
void count_hop(EpPlan& p, std::uint32_t a, std::uint32_t b) {
  const EpConfig& c = p.config;
  const Hop hop = a == b ? Hop::kLocal : c.node(a) == c.node(b) ? Hop::kIntra : Hop::kFabric;
  const auto add = [hop](Traffic& t, std::uint64_t bytes) {
    (hop == Hop::kLocal ? t.local : hop == Hop::kIntra ? t.intra : t.fabric) += bytes;
  };
  add(p.ranks[a].dispatch_sent, c.dispatch_bytes());
  add(p.ranks[b].dispatch_recv, c.dispatch_bytes());
  add(p.ranks[b].combine_sent, c.combine_bytes());
  add(p.ranks[a].combine_recv, c.combine_bytes());
}

// Source s's tokens. Scratch of `ranks` entries: seen/landed hold token + 1 of the last token
// that reached / first landed on a rank, forwarded whether s's tokens were forwarded to it.
struct Scratch {
  std::vector<std::uint32_t> seen, landed;
  std::vector<char> forwarded;
};

void count_source(EpPlan& p, const Routing& r, const Placement& place, std::uint32_t s, Scratch& sc) {
  auto& seen = sc.seen;
  auto& landed = sc.landed;
  auto& forwarded = sc.forwarded;
  const EpConfig& c = p.config;
  const std::uint32_t g = c.ranks_per_node;
  for (std::uint32_t t = 0; t < r.tokens; ++t) {
    for (const std::uint16_t e : r.token(t)) {
      const std::uint32_t d = place.owner(e);
      if (c.mode == Mode::kLowLatency) {
        ++p.ranks[s].copies_to[d];
        ++p.ranks[d].recv_copies;
        count_hop(p, s, d);
        continue;
      }
      if (seen[d] == t + 1) continue;  // normal mode: once per rank
      seen[d] = t + 1;
      ++p.ranks[d].recv_copies;
      const std::uint32_t landing = c.node(d) == c.node(s) ? d : c.node(d) * g + s % g;
      if (landing != d) {  // crossed the fabric to `landing`, forwarded to d inside the node
        count_hop(p, landing, d);
        forwarded[d] = 1;
      }
      if (landed[landing] == t + 1) continue;  // one fabric copy per node
      landed[landing] = t + 1;
      ++p.ranks[s].copies_to[landing];
      count_hop(p, s, landing);
    }
  }
}

// WRs of source s's call: the protocol in docs/design/ep.md.
void count_wrs(EpPlan& p, std::uint32_t s, const std::vector<char>& forwarded, const Placement& place) {
  const EpConfig& c = p.config;
  RankPlan& rp = p.ranks[s];
  const std::uint64_t others = c.ranks - 1;
  std::uint64_t used = 0;
  for (std::uint32_t d = 0; d < c.ranks; ++d) {
    if (d == s || rp.copies_to[d] == 0) continue;
    ++used;
    ++p.ranks[d].combine_wrs;  // d returns s's copies in one write
  }
  if (c.mode == Mode::kLowLatency) {
    rp.dispatch_wrs += others;  // one write-with-immediate per destination, empty ones included
    for (std::uint32_t d = 0; d < c.ranks; ++d) {
      if (d != s) rp.header_bytes += 4ull * place.count(d);
    }
  } else {
    rp.dispatch_wrs += others + used;  // the count round, then the payloads
  }
  for (std::uint32_t d = 0; d < c.ranks; ++d) {
    if (!forwarded[d]) continue;
    const std::uint32_t landing = c.node(d) * c.ranks_per_node + s % c.ranks_per_node;
    ++p.ranks[landing].dispatch_wrs;  // landing forwards s's tokens to d in one write
    ++p.ranks[d].combine_wrs;         // and d returns them the same way
  }
}

}  // namespace

EpPlan make_plan(const EpConfig& c, const Router& router) {
  validate(c);
  if (router.placement().ranks() != c.ranks) fail("the router was made for another number of ranks");
  EpPlan p{c, std::vector<RankPlan>(c.ranks)};
  for (auto& r : p.ranks) r.copies_to.assign(c.ranks, 0);
  Scratch sc{std::vector<std::uint32_t>(c.ranks), std::vector<std::uint32_t>(c.ranks), std::vector<char>(c.ranks)};
  for (std::uint32_t s = 0; s < c.ranks; ++s) {
    std::fill(sc.seen.begin(), sc.seen.end(), 0u);
    std::fill(sc.landed.begin(), sc.landed.end(), 0u);
    std::fill(sc.forwarded.begin(), sc.forwarded.end(), 0);
    const Routing r = router.route(s, c.tokens);
    count_source(p, r, router.placement(), s, sc);
    count_wrs(p, s, sc.forwarded, router.placement());
  }
  return p;
}

Prediction predict(const EpPlan& p, double link_bytes_per_s, double per_wr_seconds, double round_seconds) {
  Prediction out;
  const double dispatch_rounds = p.config.mode == Mode::kNormal ? 2.0 : 1.0;
  for (const auto& r : p.ranks) {
    const std::uint64_t d_bytes = std::max(r.dispatch_sent.fabric + r.header_bytes, r.dispatch_recv.fabric);
    const std::uint64_t c_bytes = std::max(r.combine_sent.fabric, r.combine_recv.fabric);
    out.dispatch_s = std::max(out.dispatch_s, kv::predict_seconds(d_bytes, r.dispatch_wrs, link_bytes_per_s, per_wr_seconds) +
                                                  dispatch_rounds * round_seconds);
    out.combine_s = std::max(out.combine_s, kv::predict_seconds(c_bytes, r.combine_wrs, link_bytes_per_s, per_wr_seconds) +
                                                round_seconds);
  }
  return out;
}

}  // namespace fabench::ep
