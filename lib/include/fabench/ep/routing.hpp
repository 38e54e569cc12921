// Routing: which top-k experts each token of each rank goes to, seeded and reproducible, with
// the skews MoE serving meets, or replayed from a recorded file.
//
// A token's experts are distinct and kept in the order chosen; the j-th one's combine weight is
// payload.hpp's weight(j). Every rank derives its tokens from (seed, rank) alone, so --plan
// and every rank of a run agree without exchanging anything.
//   uniform          every expert equally likely (top-k without replacement)
//   group limit      (n_group, topk_group): a token first picks topk_group groups, weighted by
//                    the experts they hold, then its k experts inside them (DeepSeek-V3)
//   hot-expert:R     the last expert is picked R x as often as the mean expert (R x k / E <= 1)
//   hot-rank:R       the last rank receives R x the mean rank's expert picks: each token puts
//                    floor(m) or ceil(m) picks there, m = R x k / N, the mean exact; needs R <= N
//                    and m <= the experts that rank holds
//   zipf:S           expert popularity ~ 1 / i^S over a seeded order of the experts
// Expert picks are what the skew sets; the tokens a rank receives follow from them (a token
// with two experts on one rank is dispatched there once in normal mode).
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fabench/ep/model.hpp"

namespace fabench::ep {

enum class SkewKind : std::uint8_t { kNone, kHotExpert, kHotRank, kZipf };

struct Skew {
  SkewKind kind = SkewKind::kNone;
  double value = 0;  // R or S
};

// "none", "hot-expert:R" (R >= 1), "hot-rank:R" (R >= 1), "zipf:S" (0 < S <= 4).
[[nodiscard]] Skew parse_skew(std::string_view s);
[[nodiscard]] std::string skew_name(const Skew& s);  // as parsed: "none", "hot-rank:4", ...

// One rank's tokens: ids[t * top_k + j] is token t's j-th expert.
struct Routing {
  std::uint32_t tokens = 0;
  std::uint32_t top_k = 0;
  std::vector<std::uint16_t> ids;

  [[nodiscard]] std::span<const std::uint16_t> token(std::uint32_t t) const {
    return {ids.data() + std::size_t{t} * top_k, top_k};
  }
};

// Recorded expert choices: one line per token, top_k distinct expert ids separated by spaces or
// commas; blank lines and lines starting with '#' are skipped. Errors name the file and line.
// Rank r's token t replays line (r x tokens + t) mod lines.
struct Replay {
  std::uint32_t top_k = 0;
  std::vector<std::uint16_t> ids;  // lines x top_k
  [[nodiscard]] std::size_t lines() const { return top_k ? ids.size() / top_k : 0; }
};
[[nodiscard]] Replay load_replay(const std::filesystem::path& path, const MoeShape& m);

class Router {
 public:
  // Checks that the skew fits the shape and the ranks (user errors otherwise).
  Router(const MoeShape& m, std::uint32_t ranks, Skew skew, std::uint64_t seed);
  // Replays `replay` instead of drawing.
  Router(const MoeShape& m, std::uint32_t ranks, Replay replay);

  [[nodiscard]] Routing route(std::uint32_t rank, std::uint32_t tokens) const;
  [[nodiscard]] const Placement& placement() const { return place_; }
  [[nodiscard]] const MoeShape& shape() const { return shape_; }
  [[nodiscard]] std::uint32_t hot_rank() const { return place_.ranks() - 1; }
  [[nodiscard]] std::uint32_t hot_expert() const { return shape_.experts - 1; }

 private:
  struct Draw;
  void route_token(Draw& d, std::span<std::uint16_t> out) const;
  [[nodiscard]] std::uint32_t forced_picks(Draw& d, std::span<std::uint16_t> out) const;
  void choose_groups(Draw& d, std::span<const std::uint16_t> forced) const;
  [[nodiscard]] bool eligible(const Draw& d, std::uint32_t e) const;
  [[nodiscard]] double weight(std::uint32_t e) const;
  [[nodiscard]] std::uint32_t draw_expert(Draw& d) const;
  void init_group_weights();

  MoeShape shape_;
  Placement place_;
  Skew skew_;
  std::uint64_t seed_ = 0;
  Replay replay_;
  std::vector<double> cumulative_;     // zipf: running sum of the expert weights
  std::vector<double> group_weight_;   // the weights of the experts a regular draw may take
};

}  // namespace fabench::ep
