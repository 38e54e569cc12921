// Ring schedules: reduce-scatter, all-gather, and all-reduce as the one then the other.
//
// Blocks: the (effective) count is cut into n balanced blocks (block_begin), each block into
// pipeline_chunks balanced sub-chunks; sub-chunk j runs its own ring j steps behind sub-chunk 0.
// Reduce-scatter step s (0..n-2): rank r sends its partial of block r-s-1 to r+1 and receives
// block r-s-2 from r-1 into scratch slot s, where it adds its own input; after step n-2 it holds
// block r fully reduced. All-gather step s: r sends block r-s to r+1's output and receives block
// r-s-1. Each block is reduced once, by its owner, and then only copied: every rank ends with
// bitwise the same all-reduce result, whatever the floating-point order.
#include "fabench/coll/builder.hpp"

namespace fabench::coll {

namespace {

struct Range {
  std::uint64_t lo = 0;  // elements
  std::uint64_t hi = 0;
  [[nodiscard]] std::uint64_t size() const { return hi - lo; }
};

class Ring {
 public:
  explicit Ring(const BuildParams& p)
      : n_(p.nranks),
        r_(p.rank),
        count_(p.count),
        dt_(p.dtype_bytes),
        pipes_(p.pipeline_chunks),
        slot_bytes_(ceil_div(p.count, p.nranks) * p.dtype_bytes) {}

  [[nodiscard]] std::uint32_t n() const { return n_; }
  [[nodiscard]] std::uint32_t rank() const { return r_; }
  [[nodiscard]] std::uint32_t pipes() const { return pipes_; }
  [[nodiscard]] std::uint32_t next() const { return (r_ + 1) % n_; }
  [[nodiscard]] std::uint32_t prev() const { return (r_ + n_ - 1) % n_; }
  [[nodiscard]] std::uint64_t bytes(std::uint64_t elems) const { return elems * dt_; }
  // Block r - back (mod n).
  [[nodiscard]] std::uint32_t behind(std::uint32_t back) const { return (r_ + n_ - back % n_) % n_; }
  [[nodiscard]] std::uint64_t block_lo(std::uint32_t b) const { return block_begin(count_, n_, b); }
  [[nodiscard]] Range sub(std::uint32_t b, std::uint32_t j) const {
    const std::uint64_t lo = block_lo(b);
    const std::uint64_t hi = block_lo(b + 1);
    if (pipes_ == 1) return {lo, hi};
    return {lo + block_begin(hi - lo, pipes_, j), lo + block_begin(hi - lo, pipes_, j + 1)};
  }
  // Scratch slot s holds step s's arrival; within it element e of block b sits where it sits in
  // the block, so the sub-chunks of one slot never overlap.
  [[nodiscard]] Region slot(std::uint32_t s, std::uint32_t b, std::uint64_t e) const {
    return {Buf::kScratch, s * slot_bytes_ + (e - block_lo(b)) * dt_};
  }

 private:
  std::uint32_t n_;
  std::uint32_t r_;
  std::uint64_t count_;
  std::uint64_t dt_;
  std::uint32_t pipes_;
  std::uint64_t slot_bytes_;
};

// Steps first_step + j .. first_step + j + n-2 for every sub-chunk j. The fully reduced own
// block is copied to output at (e - out_base) elements.
void ring_reduce_scatter(ScheduleBuilder& b, const Ring& g, std::size_t first_step, std::uint64_t out_base) {
  for (std::uint32_t j = 0; j < g.pipes(); ++j) {
    for (std::uint32_t s = 0; s + 1 < g.n(); ++s) {
      const std::size_t step = first_step + s + j;
      const std::uint32_t send_blk = g.behind(s + 1);
      const Range out = g.sub(send_blk, j);
      const Region src = s == 0 ? Region{Buf::kInput, g.bytes(out.lo)} : g.slot(s - 1, send_blk, out.lo);
      b.write(step, g.next(), src, g.slot(s, send_blk, out.lo), g.bytes(out.size()));

      const std::uint32_t recv_blk = g.behind(s + 2);
      const Range in = g.sub(recv_blk, j);
      const Region acc = g.slot(s, recv_blk, in.lo);
      b.expect(step, g.prev(), g.bytes(in.size()));
      b.reduce(step, {Buf::kInput, g.bytes(in.lo)}, acc, g.bytes(in.size()));
      if (s + 2 == g.n()) b.copy(step, acc, {Buf::kOutput, g.bytes(in.lo - out_base)}, g.bytes(in.size()));
    }
  }
}

// Steps first_step + j .. first_step + j + n-2. Own block element e is read first from
// own.offset + (e - block_lo(rank)) elements; everything else from and into output.
void ring_all_gather(ScheduleBuilder& b, const Ring& g, std::size_t first_step, Region own) {
  const std::uint64_t own_lo = g.block_lo(g.rank());
  for (std::uint32_t j = 0; j < g.pipes(); ++j) {
    for (std::uint32_t s = 0; s + 1 < g.n(); ++s) {
      const std::size_t step = first_step + s + j;
      const Range out = g.sub(g.behind(s), j);
      const Region src = s == 0 ? Region{own.buf, own.offset + g.bytes(out.lo - own_lo)}
                                : Region{Buf::kOutput, g.bytes(out.lo)};
      b.write(step, g.next(), src, {Buf::kOutput, g.bytes(out.lo)}, g.bytes(out.size()));
      b.expect(step, g.prev(), g.bytes(g.sub(g.behind(s + 1), j).size()));
    }
  }
}

std::size_t ring_steps(const BuildParams& p, std::uint32_t phases) {
  return static_cast<std::size_t>(phases) * (p.nranks - 1) + p.pipeline_chunks - 1;
}

}  // namespace

Schedule build_ring_all_reduce(const BuildParams& p) {
  const Ring g(p);
  ScheduleBuilder b(schedule_meta(p), ring_steps(p, 2));
  ring_reduce_scatter(b, g, 0, 0);
  ring_all_gather(b, g, p.nranks - 1, {Buf::kOutput, g.bytes(g.block_lo(p.rank))});
  return std::move(b).finish();
}

Schedule build_ring_reduce_scatter(const BuildParams& p) {
  const Ring g(p);
  ScheduleBuilder b(schedule_meta(p), ring_steps(p, 1));
  ring_reduce_scatter(b, g, 0, g.block_lo(p.rank));
  return std::move(b).finish();
}

Schedule build_ring_all_gather(const BuildParams& p) {
  const Ring g(p);
  ScheduleBuilder b(schedule_meta(p), ring_steps(p, 1));
  ring_all_gather(b, g, 0, {Buf::kInput, 0});
  // The own block reaches output by a local copy in each sub-chunk's first step (the step's
  // writes read input, so the copy races with nothing).
  for (std::uint32_t j = 0; j < p.pipeline_chunks; ++j) {
    const Range own = g.sub(p.rank, j);
    const std::uint64_t own_lo = g.block_lo(p.rank);
    b.copy(j, {Buf::kInput, g.bytes(own.lo - own_lo)}, {Buf::kOutput, g.bytes(own.lo)}, g.bytes(own.size()));
  }
  return std::move(b).finish();
}

}  // namespace fabench::coll
