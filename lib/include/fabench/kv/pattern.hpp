// Page contents and their check, the same whatever TP and layout: what a decode rank receives
// is checked against what the model's cache holds, not against what a prefill rank sent.
//
// A chunk is one global head's part of one page: (request r, layer l, tensor k, logical block
// b, head h), page_tokens x head_elems x dtype bytes (a partial last block's padding tokens
// included, since whole pages move). Its 8-byte word w is base(seed, r, l, k, b, h) + w x
// 0x9e3779b97f4a7c15, little-endian (a trailing partial word keeps its low bytes); base is a
// splitmix64 mix of the key, so a chunk in the wrong place, a stale page or a torn copy all
// read wrong. Filling and checking are tight loops over words.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "fabench/kv/layout.hpp"
#include "fabench/kv/plan.hpp"

namespace fabench::kv {

// Writes what the side's rank holds into its pool (at least pool_bytes; std::invalid_argument
// when smaller). Used on prefill ranks before a transfer, and to build expected decode pools.
void fill_pool(const KvSpec& s, Side side, std::uint32_t rank, std::span<std::byte> pool);

// Pages (one layer's K or V of one block of one request) of the rank's pool holding any byte
// that differs from the pattern; a page counts once however many bytes are wrong. Bytes no
// request covers are not checked (a pool holds only covered pages).
[[nodiscard]] std::uint64_t count_wrong_pages(const KvSpec& s, Side side, std::uint32_t rank,
                                              std::span<const std::byte> pool);

// Applies every WR with memcpy, prefill -> decode for push and pull alike (for tests). Pools are
// indexed by rank; an out-of-range rank or offset is std::out_of_range, a WR whose segments do
// not sum to its length std::logic_error.
void execute_in_memory(std::span<const PairPlan> plans, std::span<const std::span<const std::byte>> prefill_pools,
                       std::span<const std::span<std::byte>> decode_pools);

}  // namespace fabench::kv
