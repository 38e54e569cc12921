// All-to-all: block b of rank r's input goes to block r of rank b's output; the own block is a
// local copy in the first step. Each output block is written once, by one transfer or the copy.
//
// Pairwise: n-1 steps, one peer each. For a power-of-two n the peer of step s (1..n-1) is r xor s,
// so both directions of a link carry one exchange; otherwise r sends to r+s and receives from
// r-s (mod n). All-at-once: one step with all n-1 writes (the executor caps what is
// outstanding), posted starting at r+1 so that not every rank writes to rank 0 first.
#include "fabench/coll/builder.hpp"

namespace fabench::coll {

namespace {

struct Blocks {
  std::uint64_t block_bytes;
  [[nodiscard]] Region in(std::uint32_t b) const { return {Buf::kInput, b * block_bytes}; }
  [[nodiscard]] Region out(std::uint32_t b) const { return {Buf::kOutput, b * block_bytes}; }
};

Blocks blocks_of(const BuildParams& p) { return {p.count / p.nranks * p.dtype_bytes}; }

}  // namespace

Schedule build_pairwise_all_to_all(const BuildParams& p) {
  const Blocks blk = blocks_of(p);
  const std::uint32_t n = p.nranks;
  const std::uint32_t r = p.rank;
  const bool pow2 = (n & (n - 1)) == 0;
  ScheduleBuilder b(schedule_meta(p), n - 1);
  for (std::uint32_t s = 1; s < n; ++s) {
    const std::uint32_t to = pow2 ? r ^ s : (r + s) % n;
    const std::uint32_t from = pow2 ? r ^ s : (r + n - s) % n;
    b.write(s - 1, to, blk.in(to), blk.out(r), blk.block_bytes);
    b.expect(s - 1, from, blk.block_bytes);
  }
  b.copy(0, blk.in(r), blk.out(r), blk.block_bytes);
  return std::move(b).finish();
}

Schedule build_all_at_once_all_to_all(const BuildParams& p) {
  const Blocks blk = blocks_of(p);
  const std::uint32_t n = p.nranks;
  const std::uint32_t r = p.rank;
  ScheduleBuilder b(schedule_meta(p), 1);
  for (std::uint32_t i = 1; i < n; ++i) {
    const std::uint32_t to = (r + i) % n;
    b.write(0, to, blk.in(to), blk.out(r), blk.block_bytes);
  }
  for (std::uint32_t from = 0; from < n; ++from) {
    if (from != r) b.expect(0, from, blk.block_bytes);
  }
  b.copy(0, blk.in(r), blk.out(r), blk.block_bytes);
  return std::move(b).finish();
}

}  // namespace fabench::coll
