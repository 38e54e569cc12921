// What one dispatch + combine call moves: per rank and per destination, the token copies, the
// bytes on the fabric, inside a node and within the rank, the WRs each rank posts, and the time
// a link of a given rate needs. fabench-ep's --plan prints it; a run moves exactly this
// (docs/design/ep.md has the protocol the counts follow).
//
// Normal mode (prefill-like): a token goes once to each rank that holds one or more of its
// experts. With ranks_per_node G > 1 a token bound for a node other than its own crosses the
// fabric once, to the rank of that node with the sender's local index, which forwards it to
// the others of its node that need it (intra-node); ranks of the sender's own node get it
// intra-node. Combine returns one vector per dispatched copy, the same way back.
// Low-latency mode (decode-like): one copy per (token, expert), straight to the expert's rank,
// no forwarding; combine returns one vector per (token, expert).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "fabench/ep/model.hpp"
#include "fabench/ep/routing.hpp"

namespace fabench::ep {

enum class Mode : std::uint8_t { kNormal, kLowLatency };
[[nodiscard]] std::string_view mode_name(Mode m);  // "normal", "low-latency"
[[nodiscard]] Mode parse_mode(std::string_view s);

struct EpConfig {
  MoeShape shape;
  std::uint32_t ranks = 0;
  std::uint32_t ranks_per_node = 1;
  std::uint32_t tokens = 0;  // per rank and call
  Mode mode = Mode::kNormal;
  DispatchDtype dtype = DispatchDtype::kBf16;

  [[nodiscard]] std::uint32_t node(std::uint32_t rank) const { return rank / ranks_per_node; }
  [[nodiscard]] std::uint64_t dispatch_bytes() const { return dispatch_token_bytes(shape.hidden, dtype); }
  [[nodiscard]] std::uint64_t combine_bytes() const { return combine_token_bytes(shape.hidden); }
};

// User errors: ranks 0 or over the experts, ranks_per_node not dividing ranks, tokens 0 or over
// kMaxTokens, the shape (validate(MoeShape)).
void validate(const EpConfig& c);
inline constexpr std::uint32_t kMaxTokens = 1u << 20;

// Bytes one way of one call (dispatch or combine), as a rank sends or receives them.
struct Traffic {
  std::uint64_t fabric = 0;  // across nodes
  std::uint64_t intra = 0;   // between ranks of one node (forwarding included)
  std::uint64_t local = 0;   // a rank's own experts: copied, not sent
};

struct RankPlan {
  // Dispatch copies this rank sends to each destination rank as the first hop: normal mode,
  // tokens with an expert on that rank (G = 1) or landing there (G > 1); low-latency, (token,
  // expert) pairs. Combine sends the same counts back.
  std::vector<std::uint32_t> copies_to;
  std::uint32_t recv_copies = 0;   // dispatch copies its experts get (forwarded and local included)
  Traffic dispatch_sent, dispatch_recv, combine_sent, combine_recv;
  std::uint64_t dispatch_wrs = 0;  // posted per call, the count round included
  std::uint64_t combine_wrs = 0;
  std::uint64_t header_bytes = 0;  // wire bytes beyond the tokens (low-latency per-expert counts)
};

struct EpPlan {
  EpConfig config;
  std::vector<RankPlan> ranks;

  [[nodiscard]] std::uint32_t recv_copies_max() const;
  [[nodiscard]] double recv_copies_mean() const;
};

// Routes every rank's tokens with `router` (which must have been made for c.ranks) and counts.
// Memory: ranks x ranks counters; time: ranks x tokens x top_k.
[[nodiscard]] EpPlan make_plan(const EpConfig& c, const Router& router);

// The slowest rank's seconds for dispatch and combine on links of `link_bytes_per_s` (each rank
// its own), with `per_wr_seconds` per posted WR (kv::predict_seconds' rule: posting overlaps the
// wire), plus one round trip per protocol round (`round_seconds`: normal dispatch has two, the
// counts and the payload; the others one).
struct Prediction {
  double dispatch_s = 0;
  double combine_s = 0;
};
[[nodiscard]] Prediction predict(const EpPlan& p, double link_bytes_per_s, double per_wr_seconds,
                                 double round_seconds);

}  // namespace fabench::ep
