#include "fabench/coll/schedule.hpp"

#include <array>
#include <bit>
#include <stdexcept>
#include <string>
#include <utility>

#include "fabench/base/error.hpp"
#include "fabench/coll/builder.hpp"

namespace fabench::coll {

namespace {

struct CollectiveName {
  Collective value;
  std::string_view name;
};
constexpr std::array<CollectiveName, 4> kCollectiveNames = {{
    {Collective::kAllReduce, "allreduce"},
    {Collective::kAllGather, "allgather"},
    {Collective::kReduceScatter, "reducescatter"},
    {Collective::kAllToAll, "alltoall"},
}};

struct AlgorithmName {
  Algorithm value;
  std::string_view name;
};
constexpr std::array<AlgorithmName, 6> kAlgorithmNames = {{
    {Algorithm::kRing, "ring"},
    {Algorithm::kRecursiveHalvingDoubling, "rhd"},
    {Algorithm::kOneShot, "oneshot"},
    {Algorithm::kPairwise, "pairwise"},
    {Algorithm::kAllAtOnce, "allatonce"},
    {Algorithm::kRecursiveDoubling, "rd"},
}};

// Ring first: choose_auto() keeps the first of equally fast algorithms, and the ring needs only
// neighbours (two QPs per rank) and is the least exposed to contention the model ignores.
constexpr std::array<Algorithm, 4> kAllReduceAlgos = {Algorithm::kRing, Algorithm::kRecursiveHalvingDoubling,
                                                      Algorithm::kOneShot, Algorithm::kRecursiveDoubling};
constexpr std::array<Algorithm, 1> kRingOnly = {Algorithm::kRing};
constexpr std::array<Algorithm, 2> kAllToAllAlgos = {Algorithm::kPairwise, Algorithm::kAllAtOnce};

std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) throw UserError("collective buffer size overflows 64 bits");
  return r;
}

std::uint64_t checked_add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) throw UserError("collective buffer size overflows 64 bits");
  return r;
}

std::string supported_list(Collective c) {
  std::string out;
  for (Algorithm a : algorithms_for(c)) {
    if (!out.empty()) out += ", ";
    out += algorithm_name(a);
  }
  return out;
}

void validate(Collective c, Algorithm a, std::uint32_t nranks, std::uint32_t rank, std::uint32_t dtype_bytes,
              const ScheduleOptions& options) {
  if (!is_supported(c, a)) {
    throw UserError(std::string(algorithm_name(a)) + " is not an algorithm for " + std::string(collective_name(c)) +
                    " (supported: " + supported_list(c) + ")");
  }
  if (nranks == 0 || nranks > kMaxRanks) {
    throw UserError("nranks must be within 1.." + std::to_string(kMaxRanks) + ", not " + std::to_string(nranks));
  }
  if (rank >= nranks) {
    throw UserError("rank " + std::to_string(rank) + " is not below nranks " + std::to_string(nranks));
  }
  if (dtype_bytes == 0) throw UserError("dtype_bytes must be at least 1");
  if (options.pipeline_chunks == 0 || options.pipeline_chunks > kMaxPipelineChunks) {
    throw UserError("pipeline_chunks must be within 1.." + std::to_string(kMaxPipelineChunks) + ", not " +
                    std::to_string(options.pipeline_chunks));
  }
  if (options.pipeline_chunks > 1 && a != Algorithm::kRing) {
    throw UserError("pipeline_chunks applies to ring only, not " + std::string(algorithm_name(a)));
  }
}

// nranks == 1: every collective is the identity on the rank's own data.
Schedule build_local(const BuildParams& p) {
  ScheduleBuilder b(schedule_meta(p), 1);
  b.copy(0, {Buf::kInput, 0}, {Buf::kOutput, 0}, p.count * p.dtype_bytes);
  return std::move(b).finish();
}

}  // namespace

std::optional<Collective> parse_collective(std::string_view name) {
  for (const auto& n : kCollectiveNames) {
    if (n.name == name) return n.value;
  }
  return std::nullopt;
}

std::string_view collective_name(Collective c) {
  for (const auto& n : kCollectiveNames) {
    if (n.value == c) return n.name;
  }
  return "?";
}

std::optional<Algorithm> parse_algorithm(std::string_view name) {
  for (const auto& n : kAlgorithmNames) {
    if (n.name == name) return n.value;
  }
  return std::nullopt;
}

std::string_view algorithm_name(Algorithm a) {
  for (const auto& n : kAlgorithmNames) {
    if (n.value == a) return n.name;
  }
  return "?";
}

std::span<const Algorithm> algorithms_for(Collective c) {
  switch (c) {
    case Collective::kAllReduce: return kAllReduceAlgos;
    case Collective::kAllGather:
    case Collective::kReduceScatter: return kRingOnly;
    case Collective::kAllToAll: return kAllToAllAlgos;
  }
  return {};
}

bool is_supported(Collective c, Algorithm a) {
  for (Algorithm x : algorithms_for(c)) {
    if (x == a) return true;
  }
  return false;
}

std::string_view buf_name(Buf b) {
  switch (b) {
    case Buf::kInput: return "input";
    case Buf::kOutput: return "output";
    case Buf::kScratch: return "scratch";
  }
  return "?";
}

StepView Schedule::step(std::size_t k) const {
  const StepEnd begin = k == 0 ? StepEnd{} : step_ends.at(k - 1);
  const StepEnd end = step_ends.at(k);
  return StepView{
      std::span<const Transfer>(writes).subspan(begin.writes, end.writes - begin.writes),
      std::span<const std::uint32_t>(expect_from).subspan(begin.expects, end.expects - begin.expects),
      std::span<const LocalOp>(ops).subspan(begin.ops, end.ops - begin.ops),
  };
}

std::uint64_t effective_count(Collective c, std::uint64_t count, std::uint32_t nranks) {
  if (c == Collective::kAllReduce || nranks == 0) return count;
  return count - count % nranks;
}

BufferBytes buffer_bytes(Collective c, std::uint64_t count, std::uint32_t dtype_bytes, std::uint32_t nranks) {
  const std::uint64_t full = checked_mul(effective_count(c, count, nranks), dtype_bytes);
  const std::uint64_t per_rank = nranks == 0 ? 0 : full / nranks;
  switch (c) {
    case Collective::kAllReduce:
    case Collective::kAllToAll: return {full, full};
    case Collective::kAllGather: return {per_rank, full};
    case Collective::kReduceScatter: return {full, per_rank};
  }
  return {};
}

std::uint64_t scratch_bytes(Collective c, Algorithm a, std::uint32_t nranks, std::uint64_t count,
                            std::uint32_t dtype_bytes) {
  if (!is_supported(c, a)) {
    throw UserError(std::string(algorithm_name(a)) + " is not an algorithm for " + std::string(collective_name(c)));
  }
  if (nranks <= 1) return 0;
  const std::uint64_t n = effective_count(c, count, nranks);
  if (c == Collective::kAllGather || c == Collective::kAllToAll) return 0;
  switch (a) {
    case Algorithm::kRing:  // one slot of the largest chunk per reduce-scatter step
      return checked_mul(checked_mul(nranks - 1, ceil_div(n, nranks)), dtype_bytes);
    case Algorithm::kOneShot:  // one full vector from every other rank
      return checked_mul(checked_mul(nranks - 1, n), dtype_bytes);
    case Algorithm::kRecursiveHalvingDoubling: {
      // A fold area for the odd partner's vector when nranks is not a power of two, then one
      // slot per halving level, each the largest range kept at that level.
      std::uint64_t elems = std::has_single_bit(nranks) ? 0 : n;
      for (std::uint64_t half = 2; half <= nranks; half *= 2) elems = checked_add(elems, ceil_div(n, half));
      return checked_mul(elems, dtype_bytes);
    }
    case Algorithm::kRecursiveDoubling: {
      // A fold area (n not a power of two), a landing slot per level, and one more vector for
      // the first level's result when there are at least two levels.
      const std::uint64_t levels = std::bit_width(nranks) - 1;
      const std::uint64_t vectors = (std::has_single_bit(nranks) ? 0 : 1) + levels + (levels >= 2 ? 1 : 0);
      return checked_mul(checked_mul(vectors, n), dtype_bytes);
    }
    case Algorithm::kPairwise:
    case Algorithm::kAllAtOnce: break;
  }
  return 0;
}

Schedule schedule_meta(const BuildParams& p) {
  Schedule s;
  s.collective = p.collective;
  s.algorithm = p.algorithm;
  s.nranks = p.nranks;
  s.rank = p.rank;
  s.count = p.count;
  s.dtype_bytes = p.dtype_bytes;
  s.pipeline_chunks = p.pipeline_chunks;
  const BufferBytes io = buffer_bytes(p.collective, p.count, p.dtype_bytes, p.nranks);
  s.input_bytes = io.input;
  s.output_bytes = io.output;
  s.scratch_bytes = scratch_bytes(p.collective, p.algorithm, p.nranks, p.count, p.dtype_bytes);
  return s;
}

Schedule build_schedule(Collective c, Algorithm a, std::uint32_t nranks, std::uint32_t rank, std::uint64_t count,
                        std::uint32_t dtype_bytes, const ScheduleOptions& options) {
  validate(c, a, nranks, rank, dtype_bytes, options);
  const BuildParams p{c, a, nranks, rank, effective_count(c, count, nranks), dtype_bytes, options.pipeline_chunks};
  (void)schedule_meta(p);  // sizes are checked for overflow here, before any builder does arithmetic
  if (nranks == 1) return build_local(p);
  switch (c) {
    case Collective::kAllReduce:
      if (a == Algorithm::kRing) return build_ring_all_reduce(p);
      if (a == Algorithm::kRecursiveHalvingDoubling) return build_rhd_all_reduce(p);
      if (a == Algorithm::kRecursiveDoubling) return build_rd_all_reduce(p);
      return build_one_shot_all_reduce(p);
    case Collective::kAllGather: return build_ring_all_gather(p);
    case Collective::kReduceScatter: return build_ring_reduce_scatter(p);
    case Collective::kAllToAll:
      if (a == Algorithm::kPairwise) return build_pairwise_all_to_all(p);
      return build_all_at_once_all_to_all(p);
  }
  throw UserError("unknown collective");
}

std::uint64_t wire_bytes(const Schedule& s) {
  std::uint64_t total = 0;
  for (const Transfer& t : s.writes) total += t.bytes;
  return total;
}

std::uint64_t logical_bytes(Collective c, std::uint64_t count, std::uint32_t dtype_bytes, std::uint32_t nranks) {
  return checked_mul(effective_count(c, count, nranks), dtype_bytes);
}

double bus_factor(Collective c, std::uint32_t nranks) {
  if (nranks == 0) return 0.0;
  const double n = nranks;
  const double f = (n - 1.0) / n;
  return c == Collective::kAllReduce ? 2.0 * f : f;
}

}  // namespace fabench::coll
