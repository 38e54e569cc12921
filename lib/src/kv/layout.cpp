#include "fabench/kv/layout.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include <fmt/format.h>

#include "fabench/kv/error.hpp"

namespace fabench::kv {

namespace {

// splitmix64: a seeded stream that is the same on every platform (std:: distributions are not).
struct SplitMix {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};

void check_tp(std::uint32_t heads, std::uint32_t tp, std::string_view side) {
  if (tp == 0) throw KvError(fmt::format("{} TP must be at least 1", side));
  if (heads >= tp && heads % tp != 0) {
    throw KvError(fmt::format(
        "{} TP {} does not divide the model's {} KV heads (use a divisor, or more ranks than heads)", side, tp, heads));
  }
  // More ranks than heads: each head is replicated on TP / heads ranks, so TP
  // must be a multiple of the heads (vLLM refuses anything else).
  if (heads < tp && tp % heads != 0) {
    throw KvError(fmt::format("{} TP {} is not a multiple of the model's {} KV heads (with more ranks than heads, "
                              "each head is replicated on TP / heads ranks)",
                              side, tp, heads));
  }
}

}  // namespace

std::string_view layout_name(Layout l) {
  switch (l) {
    case Layout::kContiguous: return "contiguous";
    case Layout::kLayerMajor: return "layer";
    case Layout::kBlockMajor: return "block";
  }
  return "?";
}

Layout parse_layout(std::string_view s) {
  for (Layout l : {Layout::kContiguous, Layout::kLayerMajor, Layout::kBlockMajor}) {
    if (layout_name(l) == s) return l;
  }
  throw KvError(fmt::format("unknown layout \"{}\" (contiguous, layer, block)", s));
}

std::string_view direction_name(Direction d) { return d == Direction::kPush ? "push" : "pull"; }

Direction parse_direction(std::string_view s) {
  if (s == "push") return Direction::kPush;
  if (s == "pull") return Direction::kPull;
  throw KvError(fmt::format("unknown direction \"{}\" (push, pull)", s));
}

std::string_view side_name(Side s) { return s == Side::kPrefill ? "prefill" : "decode"; }

void validate(const KvSpec& s) {
  validate(s.model);
  if (s.page_tokens == 0) throw KvError("page tokens must be at least 1");
  if (s.isl == 0) throw KvError("ISL (prompt tokens) must be at least 1");
  if (s.batch == 0) throw KvError("batch must be at least 1 request");
  if (s.max_sge == 0) throw KvError("max SGE must be at least 1");
  if (!(s.fragmentation >= 0.0 && s.fragmentation <= 1.0)) {
    throw KvError(fmt::format("fragmentation must be within 0..1 (got {})", s.fragmentation));
  }
  check_tp(s.model.cached_heads(), s.prefill_tp, "prefill");
  check_tp(s.model.cached_heads(), s.decode_tp, "decode");
  const std::uint64_t pages = std::uint64_t{s.batch} * blocks_per_request(s);
  if (pages > UINT32_MAX) throw KvError(fmt::format("{} pages per (layer, K/V) is more than block ids hold", pages));
  const std::uint64_t page = std::max(page_bytes(s, Side::kPrefill), page_bytes(s, Side::kDecode));
  if (s.max_wr_bytes < page) {
    throw KvError(fmt::format("max WR bytes {} is below one page ({} B)", s.max_wr_bytes, page));
  }
}

std::uint32_t tp_size(const KvSpec& s, Side side) { return side == Side::kPrefill ? s.prefill_tp : s.decode_tp; }

HeadRange rank_heads(const KvSpec& s, Side side, std::uint32_t rank) {
  const std::uint32_t tp = tp_size(s, side);
  const std::uint32_t heads = s.model.cached_heads();
  if (rank >= tp) throw KvError(fmt::format("{} rank {} is outside TP {}", side_name(side), rank, tp));
  if (heads >= tp) return {rank * (heads / tp), heads / tp};
  return {static_cast<std::uint32_t>(std::uint64_t{rank} * heads / tp), 1};
}

std::uint32_t blocks_per_request(const KvSpec& s) {
  return static_cast<std::uint32_t>((std::uint64_t{s.isl} + s.page_tokens - 1) / s.page_tokens);
}

std::uint64_t head_chunk_bytes(const KvSpec& s) {
  return std::uint64_t{s.page_tokens} * s.model.head_elems() * dtype_bytes(s.model.dtype);
}

std::uint64_t page_bytes(const KvSpec& s, Side side) {
  const std::uint32_t tp = tp_size(s, side);
  const std::uint32_t heads = s.model.cached_heads();
  return (heads >= tp ? heads / tp : 1) * head_chunk_bytes(s);
}

std::uint64_t pool_bytes(const KvSpec& s, Side side, std::uint32_t rank) {
  validate(s);
  (void)rank_heads(s, side, rank);  // checks the rank
  return page_bytes(s, side) * s.model.layers * s.model.kv_tensors() * s.batch * blocks_per_request(s);
}

std::vector<std::uint32_t> page_table(const KvSpec& s, Side side) {
  validate(s);
  const std::size_t n = std::size_t{s.batch} * blocks_per_request(s);
  std::vector<std::uint32_t> table(n);
  std::iota(table.begin(), table.end(), 0u);
  if (s.layout == Layout::kContiguous) return table;
  const auto m = static_cast<std::size_t>(std::llround(s.fragmentation * static_cast<double>(n)));
  if (m < 2) return table;
  // Stream per side: the seed mixed with the side, so the two tables are independent.
  SplitMix rng{SplitMix{s.seed ^ (side == Side::kPrefill ? 0x70726566ull : 0x6465636full)}.next()};
  std::vector<std::uint32_t> slots(table);
  for (std::size_t i = n - 1; i > 0; --i) std::swap(slots[i], slots[rng.next() % (i + 1)]);
  for (std::size_t i = 0; i < m; ++i) table[slots[i]] = slots[(i + 1) % m];
  return table;
}

PoolMap::PoolMap(const KvSpec& s, Side side, std::uint32_t rank)
    : layout_(s.layout),
      heads_(rank_heads(s, side, rank)),
      tensors_(s.model.kv_tensors()),
      layer_tensors_(std::uint64_t{s.model.layers} * s.model.kv_tensors()),
      blocks_(blocks_per_request(s)),
      pool_blocks_(std::uint64_t{s.batch} * blocks_per_request(s)),
      page_bytes_(kv::page_bytes(s, side)),
      table_(page_table(s, side)) {}

Sizes sizes(const KvSpec& s) {
  validate(s);
  const std::uint64_t per_head_token = std::uint64_t{s.model.layers} * s.model.kv_tensors() * s.model.head_elems() *
                                       dtype_bytes(s.model.dtype);
  const std::uint64_t tokens = std::uint64_t{blocks_per_request(s)} * s.page_tokens;
  Sizes z;
  z.bytes_per_token = s.model.bytes_per_token();
  z.prefill_rank_bytes_per_token = per_head_token * rank_heads(s, Side::kPrefill, 0).count;
  z.decode_rank_bytes_per_token = per_head_token * rank_heads(s, Side::kDecode, 0).count;
  z.prefill_page_bytes = page_bytes(s, Side::kPrefill);
  z.decode_page_bytes = page_bytes(s, Side::kDecode);
  z.pages_per_request = blocks_per_request(s);
  z.layer_bytes_per_request = tokens * z.bytes_per_token / s.model.layers;
  z.request_bytes = tokens * z.bytes_per_token;
  z.moved_bytes_per_request = tokens * z.decode_rank_bytes_per_token * s.decode_tp;
  z.prefill_pool_bytes = pool_bytes(s, Side::kPrefill, 0);
  z.decode_pool_bytes = pool_bytes(s, Side::kDecode, 0);
  return z;
}

}  // namespace fabench::kv
