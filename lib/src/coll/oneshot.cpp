// One-shot all-reduce: one step. Every rank writes its whole input into a slot of every other
// rank's scratch (slot s of rank d holds rank s's vector, s < d ? s : s - 1), then reduces all n
// vectors into output in rank order 0, 1, ..., n-1. The order and the operand positions are the
// same on every rank, so the results are bitwise identical even in floating point.
// Latency-optimal (one step), bandwidth-heavy: (n-1) x S on the wire per rank.
#include "fabench/coll/builder.hpp"

namespace fabench::coll {

Schedule build_one_shot_all_reduce(const BuildParams& p) {
  ScheduleBuilder b(schedule_meta(p), 1);
  const std::uint64_t bytes = p.count * p.dtype_bytes;
  const auto slot = [&](std::uint32_t src, std::uint32_t dst) -> Region {
    return {Buf::kScratch, static_cast<std::uint64_t>(src < dst ? src : src - 1) * bytes};
  };
  // Start at the next rank so that rank d's first incoming write does not come from everyone
  // at once (the executor caps what is outstanding; the order of posting is free).
  for (std::uint32_t i = 1; i < p.nranks; ++i) {
    const std::uint32_t dst = (p.rank + i) % p.nranks;
    b.write(0, dst, {Buf::kInput, 0}, slot(p.rank, dst), bytes);
  }
  for (std::uint32_t src = 0; src < p.nranks; ++src) {
    if (src != p.rank) b.expect(0, src, bytes);
  }
  const auto vector_of = [&](std::uint32_t src) -> Region {
    return src == p.rank ? Region{Buf::kInput, 0} : slot(src, p.rank);
  };
  b.copy(0, vector_of(0), {Buf::kOutput, 0}, bytes);
  for (std::uint32_t src = 1; src < p.nranks; ++src) b.reduce(0, vector_of(src), {Buf::kOutput, 0}, bytes);
  return std::move(b).finish();
}

}  // namespace fabench::coll
