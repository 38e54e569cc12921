// The KV transfer's shape and memory model: KvSpec (model, requests, TP on each side, layout,
// fragmentation, how WRs are built), which heads each TP rank holds, the page tables, where each
// page lies in a rank's pool (PoolMap) and the sizes derived from all that. docs/kv.md has the
// same rules with pictures.
//
// Pools. Every rank (prefill rank i of prefill_tp, decode rank j of decode_tp) holds one pool of
// exactly the pages of the batch's requests: each request has B = ceil(isl / page_tokens) logical
// blocks; a partial last block still occupies (and sends) a whole page. A page holds one layer's
// K or V (MLA: the latent) of page_tokens tokens for the rank's heads only, in HND order
// ([local head][token][elem]) so that any head range is one contiguous run in the page.
//
// Heads. With H = ModelShape::cached_heads() and TP t: when H >= t, rank r holds heads
// [r*H/t, (r+1)*H/t) (H % t == 0 is required); when H < t, rank r holds the one head
// floor(r*H/t), replicated on t/H ranks. MLA has H = 1: every rank holds the whole latent.
// A head decode rank j needs comes from the prefill rank holding it; when several do (H <
// prefill_tp), from the (j mod n)-th of its n holders (MLA: prefill rank j mod prefill_tp).
//
// Page addresses, offsets from the pool's base, with L layers, S = kv_tensors() (2, or 1 for
// MLA), k < S, N = batch * B pages per (layer, k), P = the side's page bytes, id = the block id
// the side's page table gives (request r, logical block b):
//   layer-major (vLLM):          ((l*S + k) * N + id) * P     one K and one V pool per layer
//   block-major (TensorRT-LLM):  (id * L*S + l*S + k) * P     all layers of a block together
//   contiguous:                  ((r*L*S + l*S + k) * B + b) * P
//                                one region per request, requests back to back; no page table
//
// Page tables. One per side, shared by all ranks of the side (as one inference instance's
// scheduler assigns block ids for all its TP ranks). Slot s = r*B + b starts with id s
// (requests back to back, blocks consecutive). Fragmentation f displaces m = round(f * N) of
// them when m >= 2: a seeded Fisher-Yates shuffle of all slots picks the first m, c_0..c_{m-1},
// and slot c_i takes id c_{(i+1) mod m}, so exactly those m move and every id is used once. The
// two sides draw from different streams of the seed, so their tables are independent; f = 1
// gives a random cyclic permutation on each side. Contiguous ignores the tables.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "fabench/kv/model.hpp"

namespace fabench::kv {

enum class Layout : std::uint8_t { kContiguous, kLayerMajor, kBlockMajor };
enum class Side : std::uint8_t { kPrefill, kDecode };
// kPush: the prefill rank RDMA-writes into the decode rank's pool. kPull: the decode rank
// RDMA-reads from the prefill rank's pool. Data always moves prefill -> decode.
enum class Direction : std::uint8_t { kPush, kPull };

[[nodiscard]] std::string_view layout_name(Layout l);        // "contiguous", "layer", "block"
[[nodiscard]] Layout parse_layout(std::string_view s);       // those names; else KvError
[[nodiscard]] std::string_view direction_name(Direction d);  // "push", "pull"
[[nodiscard]] Direction parse_direction(std::string_view s);
[[nodiscard]] std::string_view side_name(Side s);  // "prefill", "decode"

struct KvSpec {
  ModelShape model;
  std::uint32_t page_tokens = 16;  // vLLM's default; FlashMLA uses 64
  std::uint32_t isl = 4096;        // prompt tokens per request
  std::uint32_t batch = 1;         // concurrent requests
  std::uint32_t prefill_tp = 1;
  std::uint32_t decode_tp = 1;
  Layout layout = Layout::kLayerMajor;
  double fragmentation = 0.0;  // 0..1, see the page tables above
  bool merge = true;           // fuse pieces contiguous on both sides (plan.hpp)
  std::uint32_t max_sge = 1;   // local segments per WR
  // A merged WR stops growing here: mlx5 devices report max_msg_sz = 1 GiB.
  std::uint64_t max_wr_bytes = std::uint64_t{1} << 30;
  Direction direction = Direction::kPush;
  std::uint64_t seed = 1;
};

// Throws KvError (one line) for a spec the rules above cannot serve.
void validate(const KvSpec& s);

struct HeadRange {
  std::uint32_t first = 0;
  std::uint32_t count = 0;
  friend bool operator==(const HeadRange&, const HeadRange&) = default;
};

[[nodiscard]] std::uint32_t tp_size(const KvSpec& s, Side side);
// The global heads rank holds of the side's TP group (see "Heads" above).
[[nodiscard]] HeadRange rank_heads(const KvSpec& s, Side side, std::uint32_t rank);
[[nodiscard]] std::uint32_t blocks_per_request(const KvSpec& s);  // B = ceil(isl / page_tokens)
// One head's part of a page: page_tokens x head_elems x dtype bytes.
[[nodiscard]] std::uint64_t head_chunk_bytes(const KvSpec& s);
[[nodiscard]] std::uint64_t page_bytes(const KvSpec& s, Side side);
// L x S x batch x B pages of page_bytes; KvError for a rank outside the side's TP group.
[[nodiscard]] std::uint64_t pool_bytes(const KvSpec& s, Side side, std::uint32_t rank);

// The side's page table: entry r*B + b is the block id of (request r, logical block b).
[[nodiscard]] std::vector<std::uint32_t> page_table(const KvSpec& s, Side side);

// Where pages lie in one rank's pool.
class PoolMap {
 public:
  PoolMap(const KvSpec& s, Side side, std::uint32_t rank);

  [[nodiscard]] std::uint64_t page_offset(std::uint32_t request, std::uint32_t layer, std::uint32_t tensor,
                                          std::uint32_t block) const {
    const std::uint64_t lk = std::uint64_t{layer} * tensors_ + tensor;
    switch (layout_) {
      case Layout::kLayerMajor: return (lk * pool_blocks_ + block_id(request, block)) * page_bytes_;
      case Layout::kBlockMajor: return (std::uint64_t{block_id(request, block)} * layer_tensors_ + lk) * page_bytes_;
      case Layout::kContiguous: break;
    }
    return ((std::uint64_t{request} * layer_tensors_ + lk) * blocks_ + block) * page_bytes_;
  }
  [[nodiscard]] std::uint32_t block_id(std::uint32_t request, std::uint32_t block) const {
    return table_[std::size_t{request} * blocks_ + block];
  }
  [[nodiscard]] Layout layout() const { return layout_; }
  [[nodiscard]] HeadRange heads() const { return heads_; }
  [[nodiscard]] std::uint64_t page_bytes() const { return page_bytes_; }
  [[nodiscard]] std::uint64_t pool_bytes() const { return page_bytes_ * layer_tensors_ * pool_blocks_; }

 private:
  Layout layout_;
  HeadRange heads_;
  std::uint32_t tensors_;
  std::uint64_t layer_tensors_;  // L x S
  std::uint32_t blocks_;         // B
  std::uint64_t pool_blocks_;    // N = batch x B
  std::uint64_t page_bytes_;
  std::vector<std::uint32_t> table_;
};

// The sizes --plan shows. "Model" figures count every head once, over whole pages.
struct Sizes {
  std::uint64_t bytes_per_token = 0;  // the model's
  std::uint64_t prefill_rank_bytes_per_token = 0;
  std::uint64_t decode_rank_bytes_per_token = 0;
  std::uint64_t prefill_page_bytes = 0;
  std::uint64_t decode_page_bytes = 0;
  std::uint32_t pages_per_request = 0;        // B, per (layer, k) and rank
  std::uint64_t layer_bytes_per_request = 0;  // one layer, K and V, all heads
  std::uint64_t request_bytes = 0;            // B x page_tokens x bytes_per_token
  std::uint64_t moved_bytes_per_request = 0;  // what all decode ranks receive (replicas count)
  std::uint64_t prefill_pool_bytes = 0;       // per rank
  std::uint64_t decode_pool_bytes = 0;        // per rank
};
[[nodiscard]] Sizes sizes(const KvSpec& s);

}  // namespace fabench::kv
