// Recursive halving-doubling all-reduce (Rabenseifner): reduce-scatter by recursive halving,
// then all-gather by recursive doubling, over p = 2^floor(log2 n) "core" ranks.
//
// When n is not a power of two, rem = n - p: the first 2 rem ranks pair up (2i, 2i+1). In the
// first step the odd one writes its whole input into the even one's fold area, which adds its
// own; the odd ranks then sit out, and in the last step each even rank writes the result to its
// odd partner. Core rank numbers: nu = r/2 for even r < 2 rem, r - rem for r >= 2 rem.
//
// Halving level i (mask p/2^(i+1)): the current block range [lo, hi) of the p blocks is split
// in two; the rank whose nu has the mask bit keeps the upper half. It sends the other half of its
// current partial to its partner's slot i and adds its own partial of the kept half into slot i,
// which the partner filled. After log2 p levels core rank nu holds block nu, reduced once, then
// copied to output; doubling level i (mask 2^i) exchanges the 2^i blocks each side has.
//
// Recursive doubling all-reduce (build_rd_all_reduce): the same fold and core ranks, then log2 p
// levels (mask 1 up to p/2) in which partners exchange their whole partial vector and both reduce
// it: log2 p steps instead of 2 log2 p, log2 p vectors on the wire instead of about 2, so it is the
// one for small messages, where a step costs more than its bytes. Both partners compute
// lower op upper (lower: the partner whose nu lacks the mask bit), so the ranks' results are
// bitwise identical whatever the reduction. Scratch: the fold area, then landing slot R_i per
// level, then one vector X. Level i's result goes to D_i: X for i = 0, R_(i-1) for the middle
// levels (landed and read one step earlier), output for the last; neither D_i is what the level's
// write reads (rule C), and every landing slot is written by one transfer only (rule A).
#include <bit>

#include "fabench/coll/builder.hpp"

namespace fabench::coll {

namespace {

class Rhd {
 public:
  explicit Rhd(const BuildParams& p)
      : n_(p.nranks),
        r_(p.rank),
        count_(p.count),
        dt_(p.dtype_bytes),
        pow2_(std::bit_floor(n_)),
        levels_(std::bit_width(n_) - 1),
        rem_(n_ - pow2_) {}

  [[nodiscard]] std::uint32_t levels() const { return levels_; }
  [[nodiscard]] bool folds() const { return rem_ > 0; }
  [[nodiscard]] std::size_t fold_steps() const { return folds() ? 1 : 0; }
  [[nodiscard]] std::size_t num_steps() const { return 2 * fold_steps() + 2 * levels_; }
  // Odd member of a pair: contributes in the first step, receives in the last.
  [[nodiscard]] bool sits_out() const { return r_ < 2 * rem_ && r_ % 2 == 1; }
  [[nodiscard]] bool folds_in() const { return r_ < 2 * rem_ && r_ % 2 == 0; }
  [[nodiscard]] std::uint32_t nu() const { return r_ < 2 * rem_ ? r_ / 2 : r_ - rem_; }
  [[nodiscard]] std::uint32_t real(std::uint32_t core) const { return core < rem_ ? 2 * core : core + rem_; }
  [[nodiscard]] std::uint64_t elem(std::uint64_t block) const { return block_begin(count_, pow2_, block); }
  [[nodiscard]] std::uint64_t bytes(std::uint64_t elems) const { return elems * dt_; }
  [[nodiscard]] std::uint64_t vector_bytes() const { return count_ * dt_; }
  [[nodiscard]] std::uint32_t pow2() const { return pow2_; }
  // Scratch: the fold area (a whole vector, only when n is not a power of two), then slot i for
  // each level, sized for the largest range kept at that level (ceil(count / 2^(i+1))).
  [[nodiscard]] Region slot(std::uint32_t level) const {
    std::uint64_t off = folds() ? vector_bytes() : 0;
    for (std::uint32_t i = 0, half = 2; i < level; ++i, half *= 2) off += bytes(ceil_div(count_, half));
    return {Buf::kScratch, off};
  }

 private:
  std::uint32_t n_;
  std::uint32_t r_;
  std::uint64_t count_;
  std::uint64_t dt_;
  std::uint32_t pow2_;  // the largest power of two <= n_
  std::uint32_t levels_;
  std::uint32_t rem_;
};

// Where the rank's partial for element range starting at `lo` lives: `at` holds element
// `at_lo` at its offset.
struct Partial {
  Region at;
  std::uint64_t at_lo = 0;
  [[nodiscard]] Region of(std::uint64_t e, std::uint64_t dt) const { return {at.buf, at.offset + (e - at_lo) * dt}; }
};

void halving(ScheduleBuilder& b, const Rhd& g, std::size_t first_step, Partial cur, std::uint32_t dt) {
  const std::uint32_t nu = g.nu();
  std::uint64_t lo = 0;
  std::uint64_t hi = g.pow2();
  for (std::uint32_t i = 0; i < g.levels(); ++i) {
    const std::size_t step = first_step + i;
    const std::uint32_t mask = g.pow2() >> (i + 1);
    const std::uint32_t partner = g.real(nu ^ mask);
    const std::uint64_t mid = lo + (hi - lo) / 2;
    const bool upper = (nu & mask) != 0;
    const std::uint64_t keep_lo = upper ? mid : lo;
    const std::uint64_t keep_hi = upper ? hi : mid;
    const std::uint64_t send_lo = upper ? lo : mid;
    const std::uint64_t send_hi = upper ? mid : hi;
    // The partner keeps what this rank sends, so its slot i starts at element elem(send_lo).
    b.write(step, partner, cur.of(g.elem(send_lo), dt), g.slot(i), g.bytes(g.elem(send_hi) - g.elem(send_lo)));
    const std::uint64_t kept = g.bytes(g.elem(keep_hi) - g.elem(keep_lo));
    b.expect(step, partner, kept);
    b.reduce(step, cur.of(g.elem(keep_lo), dt), g.slot(i), kept);
    cur = Partial{g.slot(i), g.elem(keep_lo)};
    lo = keep_lo;
    hi = keep_hi;
  }
  // Now [lo, hi) is block nu, fully reduced in the last slot.
  b.copy(first_step + g.levels() - 1, cur.at, {Buf::kOutput, g.bytes(g.elem(nu))},
         g.bytes(g.elem(nu + 1) - g.elem(nu)));
}

void doubling(ScheduleBuilder& b, const Rhd& g, std::size_t first_step) {
  const std::uint32_t nu = g.nu();
  for (std::uint32_t i = 0; i < g.levels(); ++i) {
    const std::uint32_t mask = 1u << i;
    const std::uint32_t partner_nu = nu ^ mask;
    const std::uint64_t mine = (nu >> i) << i;  // first of the 2^i blocks each side holds
    const std::uint64_t theirs = (partner_nu >> i) << i;
    const std::uint64_t lo = g.elem(mine);
    const std::uint64_t bytes = g.bytes(g.elem(mine + mask) - lo);
    b.write(first_step + i, g.real(partner_nu), {Buf::kOutput, g.bytes(lo)}, {Buf::kOutput, g.bytes(lo)}, bytes);
    b.expect(first_step + i, g.real(partner_nu), g.bytes(g.elem(theirs + mask) - g.elem(theirs)));
  }
}

// Recursive doubling's scratch: the fold area, landing slot i, and X after the last slot.
Region rd_slot(const Rhd& g, std::uint32_t i) {
  return {Buf::kScratch, (g.folds() ? g.vector_bytes() : 0) + std::uint64_t{i} * g.vector_bytes()};
}

// Where level i's result goes (see the top of the file).
Region rd_result(const Rhd& g, std::uint32_t i) {
  if (i + 1 == g.levels()) return {Buf::kOutput, 0};
  if (i == 0) return rd_slot(g, g.levels());
  return rd_slot(g, i - 1);
}

}  // namespace

Schedule build_rhd_all_reduce(const BuildParams& p) {
  const Rhd g(p);
  ScheduleBuilder b(schedule_meta(p), g.num_steps());
  const std::size_t last = g.num_steps() - 1;
  if (g.sits_out()) {
    b.write(0, p.rank - 1, {Buf::kInput, 0}, {Buf::kScratch, 0}, g.vector_bytes());
    b.expect(last, p.rank - 1, g.vector_bytes());
    return std::move(b).finish();
  }
  Partial start{{Buf::kInput, 0}, 0};
  if (g.folds_in()) {
    b.expect(0, p.rank + 1, g.vector_bytes());
    b.reduce(0, {Buf::kInput, 0}, {Buf::kScratch, 0}, g.vector_bytes());
    start = Partial{{Buf::kScratch, 0}, 0};
  }
  halving(b, g, g.fold_steps(), start, p.dtype_bytes);
  doubling(b, g, g.fold_steps() + g.levels());
  if (g.folds_in()) b.write(last, p.rank + 1, {Buf::kOutput, 0}, {Buf::kOutput, 0}, g.vector_bytes());
  return std::move(b).finish();
}

Schedule build_rd_all_reduce(const BuildParams& p) {
  const Rhd g(p);
  const std::size_t steps = 2 * g.fold_steps() + g.levels();
  ScheduleBuilder b(schedule_meta(p), steps);
  const std::uint64_t bytes = g.vector_bytes();
  if (g.sits_out()) {
    b.write(0, p.rank - 1, {Buf::kInput, 0}, {Buf::kScratch, 0}, bytes);
    b.expect(steps - 1, p.rank - 1, bytes);
    return std::move(b).finish();
  }
  Region cur{Buf::kInput, 0};
  if (g.folds_in()) {
    b.expect(0, p.rank + 1, bytes);
    b.reduce(0, {Buf::kInput, 0}, {Buf::kScratch, 0}, bytes);
    cur = {Buf::kScratch, 0};
  }
  const std::uint32_t nu = g.nu();
  for (std::uint32_t i = 0; i < g.levels(); ++i) {
    const std::size_t step = g.fold_steps() + i;
    const std::uint32_t mask = 1u << i;
    const std::uint32_t partner = g.real(nu ^ mask);
    const Region landed = rd_slot(g, i);
    const Region result = rd_result(g, i);
    b.write(step, partner, cur, landed, bytes);
    b.expect(step, partner, bytes);
    // result = lower op upper on both partners: the lower starts from its own partial, the
    // upper from the one it received.
    const bool lower = (nu & mask) == 0;
    b.copy(step, lower ? cur : landed, result, bytes);
    b.reduce(step, lower ? landed : cur, result, bytes);
    cur = result;
  }
  if (g.folds_in()) b.write(steps - 1, p.rank + 1, {Buf::kOutput, 0}, {Buf::kOutput, 0}, bytes);
  return std::move(b).finish();
}

}  // namespace fabench::coll
