// Work-request plans: for each (prefill rank, decode rank) that exchanges data, the RDMA WRs
// that move every page piece the decode rank needs, built once before any timing; the counts
// behind --plan; the time model; link rates.
//
// A piece is one page's share of a route: the head range decode rank j takes from prefill rank
// i, one contiguous run in both pages (HND order). Per request, pieces are visited in the order
// of their remote offsets (the remote side's page table sorted), so runs contiguous on the
// remote side are found whatever the fragmentation. A WR is one remote range (contiguous in the
// remote pool) and up to max_sge local segments summing to its length. Push: local = prefill,
// remote = decode (RDMA write). Pull: local = decode, remote = prefill (RDMA read).
//   merge:    the next piece joins the open WR when its remote offset continues the WR and the
//             WR stays within max_wr_bytes: it extends the last segment when also contiguous
//             locally, else takes a new segment while the WR has fewer than max_sge.
//   no merge: one WR, one segment per piece.
// WRs never span requests (each request's cache moves when its prefill ends).
// Unmerged: batch x layers x S x B WRs per pair. Merged at fragmentation 0 with whole pages on
// both sides (equal TP): layer-major layers x S per request, block-major and contiguous 1
// (more when a request exceeds max_wr_bytes).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "fabench/kv/layout.hpp"

namespace fabench::kv {

struct Segment {
  std::uint64_t offset = 0;  // from the local pool's base
  std::uint64_t length = 0;
};

// Flat: the WR's local segments are PairPlan::segments[first_segment, first_segment + count).
struct Wr {
  std::uint64_t remote_offset = 0;  // from the remote pool's base
  std::uint64_t length = 0;
  std::uint32_t first_segment = 0;
  std::uint32_t segment_count = 0;
};

// Decode rank decode_rank takes global heads [heads.first, +count) from prefill rank prefill_rank.
struct Route {
  std::uint32_t prefill_rank = 0;
  std::uint32_t decode_rank = 0;
  HeadRange heads;
};

struct PairPlan {
  std::uint32_t prefill_rank = 0;
  std::uint32_t decode_rank = 0;
  Direction direction = Direction::kPush;
  HeadRange heads;
  std::vector<Wr> wrs;
  std::vector<Segment> segments;
  std::vector<std::uint32_t> request_first_wr;  // request r's WRs: [r], [r+1]); batch + 1 entries
  std::uint64_t bytes = 0;

  // The rank that posts the WRs (push: prefill, pull: decode) and the one it targets.
  [[nodiscard]] std::uint32_t local_rank() const { return direction == Direction::kPush ? prefill_rank : decode_rank; }
  [[nodiscard]] std::uint32_t remote_rank() const { return direction == Direction::kPush ? decode_rank : prefill_rank; }
  [[nodiscard]] std::span<const Segment> local(const Wr& wr) const {
    return std::span<const Segment>(segments).subspan(wr.first_segment, wr.segment_count);
  }
};

// Every (prefill, decode) pair that exchanges data, ordered by prefill rank, then decode rank.
[[nodiscard]] std::vector<Route> routes(const KvSpec& s);
// One plan per route, same order. Validates s (KvError).
[[nodiscard]] std::vector<PairPlan> make_plans(const KvSpec& s);

// What make_plans would build, counted without storing it (for --plan at any size).
struct PlanStats {
  std::uint64_t wrs = 0;  // all pairs, whole batch
  std::uint64_t segments = 0;
  std::uint64_t bytes = 0;
  std::uint32_t pairs = 0;
  std::uint64_t max_pair_wrs = 0;
  std::uint64_t max_poster_wrs = 0;  // busiest posting rank: prefill for push, decode for pull
  std::uint64_t max_rank_bytes = 0;  // busiest link: a prefill rank's sent or a decode rank's received bytes
};
[[nodiscard]] PlanStats plan_stats(const KvSpec& s);

// Seconds to move `bytes` through one link with `wrs` posted by one rank: posting overlaps the
// wire, so whichever is slower decides: max(bytes / link_bytes_per_s, wrs x per_wr_seconds).
[[nodiscard]] double predict_seconds(std::uint64_t bytes, std::uint64_t wrs, double link_bytes_per_s,
                                     double per_wr_seconds);
// A batch's transfer: every rank has its own link, so the busiest rank decides.
[[nodiscard]] double predict_seconds(const PlanStats& st, double link_bytes_per_s, double per_wr_seconds);

// "400G", "200Gb", "100g", "25G", "50Gbps", "800Gbit/s", also M and T prefixes -> bytes per
// second, G = 1e9 bits. Bytes ("400GB") and bare numbers are KvErrors: link rates are in bits.
[[nodiscard]] double parse_link_rate(std::string_view s);

}  // namespace fabench::kv
