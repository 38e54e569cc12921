// Collective schedules as pure data: what each rank writes to whom, what it waits for and what it
// reduces or copies locally, step by step. No verbs, no sockets: an executor (RDMA writes with
// immediate over RC QPs) or the in-memory simulator (coll/simulate.hpp) runs them.
//
// Execution model every schedule is built for (docs/collectives.md has the long form):
//   for each step k, on every rank:
//     1. post the step's writes (each one RDMA write with immediate to dst_rank);
//     2. wait until every arrival in expect_from has landed (one completion per entry) AND every
//        write of step 1 has completed locally (the data is in the peer's memory);
//     3. run the step's ops in order; then go to step k + 1.
//   Steps are aligned: every rank of one call has the same number of steps, some of them empty.
//   No barrier separates steps: a rank may be several steps ahead of a peer, since RDMA writes
//   need nothing from the receiver.
//
// Hazard rules (checked by the simulator on every schedule it runs). Because a sender may be
// steps ahead of its receiver, a byte can only be written remotely if the receiver has no use
// for it before the step that expects it:
//   A. Within one call, each byte of each rank's output and scratch is the destination of at most
//      one transfer. (Hence one scratch region per step's incoming data.)
//   B. The receiver does not read or write a byte that a transfer will land on before that
//      transfer has landed: not in an op of an earlier step, not as the source of a write of an
//      earlier step or of the step that expects it.
//   C. A step's ops never write a byte that a write of the same step reads (the executor may run
//      ops while its own writes are still being read out by the NIC).
//   D. Input is read-only (no op or transfer writes it); output and scratch are read only after
//      something wrote them in this call.
// A then B make a remote write the first and only access to its bytes until the receiver has
// waited for it; C keeps a source stable until its write completes. Between two calls the
// executor must still make sure no rank starts call i + 1 while a peer is inside call i (e.g. a
// barrier, or alternating scratch), because rule A only holds within one call.
//
// Sizes (nccl-tests' convention): `count` is the number of elements of the full buffer S.
//   all-reduce:      input count, output count (exact, any count; chunks may be uneven or empty)
//   all-gather:      input count/n, output count
//   reduce-scatter:  input count, output count/n
//   all-to-all:      input count, output count; block b of rank r's input goes to block r of
//                    rank b's output (blocks of count/n elements)
// For all-gather, reduce-scatter and all-to-all the count is rounded down to a multiple of n
// (as nccl-tests does); effective_count() says what is actually moved. Offsets and sizes in a
// schedule are bytes; only reductions need to know the element type.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace fabench::coll {

enum class Collective : std::uint8_t { kAllReduce, kAllGather, kReduceScatter, kAllToAll };
enum class Algorithm : std::uint8_t {
  kRing,
  kRecursiveHalvingDoubling,  // Rabenseifner: reduce-scatter by halving, all-gather by doubling
  kOneShot,                   // every rank writes its whole input to every other rank
  kPairwise,                  // all-to-all in n-1 steps, one peer per step
  kAllAtOnce,                 // all-to-all in one step, n-1 writes
  kRecursiveDoubling,         // all-reduce: log2 n steps, each exchanging the whole vector
};

// CLI names: allreduce, allgather, reducescatter, alltoall; ring, rhd, oneshot, pairwise,
// allatonce, rd. Parsing is exact (lower case); nullopt for anything else.
[[nodiscard]] std::optional<Collective> parse_collective(std::string_view name);
[[nodiscard]] std::string_view collective_name(Collective c);
[[nodiscard]] std::optional<Algorithm> parse_algorithm(std::string_view name);
[[nodiscard]] std::string_view algorithm_name(Algorithm a);

// The algorithms build_schedule() accepts for `c`, in the order choose_auto() breaks ties.
[[nodiscard]] std::span<const Algorithm> algorithms_for(Collective c);
[[nodiscard]] bool is_supported(Collective c, Algorithm a);

// The three buffers of a rank. Input is the user's (read-only), output the user's result,
// scratch the collective's own landing area (scratch_bytes() per rank, the same on every rank).
enum class Buf : std::uint8_t { kInput, kOutput, kScratch };
[[nodiscard]] std::string_view buf_name(Buf b);

// (buffer, byte offset): where a transfer or an op starts.
struct Region {
  Buf buf = Buf::kInput;
  std::uint64_t offset = 0;
};

// One RDMA write: `bytes` from this rank's (src_buf, src_offset) to dst_rank's
// (dst_buf, dst_offset). Fields are flat (32 bytes) because a 1024-rank ring has two million.
// Never zero bytes, never to the writing rank itself (local moves are ops).
struct Transfer {
  std::uint64_t src_offset = 0;
  std::uint64_t dst_offset = 0;
  std::uint64_t bytes = 0;
  std::uint32_t dst_rank = 0;
  Buf src_buf = Buf::kInput;
  Buf dst_buf = Buf::kOutput;
};

enum class OpKind : std::uint8_t {
  kReduce,  // dst = dst op src, element by element, over bytes / dtype size elements
  kCopy,    // memcpy(dst, src, bytes)
};

// A local op of the rank that owns the schedule; src and dst never overlap.
struct LocalOp {
  std::uint64_t src_offset = 0;
  std::uint64_t dst_offset = 0;
  std::uint64_t bytes = 0;
  OpKind kind = OpKind::kCopy;
  Buf src_buf = Buf::kInput;
  Buf dst_buf = Buf::kOutput;
};

// One step of one rank, as views into its Schedule.
struct StepView {
  std::span<const Transfer> writes;
  std::span<const std::uint32_t> expect_from;  // one entry per expected transfer (repeats allowed)
  std::span<const LocalOp> ops;                // in execution order
  [[nodiscard]] bool empty() const { return writes.empty() && expect_from.empty() && ops.empty(); }
};

// Where step k's items end in Schedule's flat vectors (k's items start where k - 1's end).
struct StepEnd {
  std::uint32_t writes = 0;
  std::uint32_t expects = 0;
  std::uint32_t ops = 0;
};

struct ScheduleOptions {
  // Ring algorithms only: each ring chunk is split into this many sub-chunks travelling on
  // staggered rings (sub-chunk j runs j steps behind sub-chunk 0), so up to this many are in
  // flight per step. An executor that waits per step gains nothing from it; one that starts an op
  // as soon as the arrivals it reads have landed overlaps reduction with transfer.
  std::uint32_t pipeline_chunks = 1;
};
inline constexpr std::uint32_t kMaxPipelineChunks = 1024;
// Ranks are u32 and a schedule's per-step indices are u32: 2 (n-1) x pipeline_chunks writes per
// rank must fit, with room to spare.
inline constexpr std::uint32_t kMaxRanks = 1u << 16;

// One rank's schedule for one call. Items live in flat vectors grouped by step, in step order
// (steps_ends indexes them), so a schedule is four allocations however many steps it has.
struct Schedule {
  Collective collective = Collective::kAllReduce;
  Algorithm algorithm = Algorithm::kRing;
  std::uint32_t nranks = 1;
  std::uint32_t rank = 0;
  std::uint64_t count = 0;  // effective element count (see effective_count)
  std::uint32_t dtype_bytes = 1;
  std::uint32_t pipeline_chunks = 1;
  std::uint64_t input_bytes = 0;
  std::uint64_t output_bytes = 0;
  std::uint64_t scratch_bytes = 0;  // the same on every rank of the call

  std::vector<Transfer> writes;
  std::vector<std::uint32_t> expect_from;
  std::vector<LocalOp> ops;
  std::vector<StepEnd> step_ends;

  [[nodiscard]] std::size_t num_steps() const { return step_ends.size(); }
  [[nodiscard]] StepView step(std::size_t k) const;
};

// The element count a call actually moves: count itself for all-reduce, count rounded down to a
// multiple of nranks otherwise.
[[nodiscard]] std::uint64_t effective_count(Collective c, std::uint64_t count, std::uint32_t nranks);

struct BufferBytes {
  std::uint64_t input = 0;
  std::uint64_t output = 0;
};
// Input and output bytes per rank for `count` (as given; rounded as effective_count does).
// Throws std::invalid_argument when a size does not fit in 64 bits.
[[nodiscard]] BufferBytes buffer_bytes(Collective c, std::uint64_t count, std::uint32_t dtype_bytes,
                                       std::uint32_t nranks);
// Scratch bytes per rank (the same on every rank): (n-1) x ceil(count/n) elements for ring
// all-reduce and reduce-scatter, count + sum of ceil(count/2^(i+1)) for recursive
// halving-doubling (count only when n is not a power of two), (n-1) x count for one-shot,
// (fold + log2 p + (log2 p >= 2)) x count for recursive doubling (fold: 1 when n is not a power of
// two, p = 2^floor(log2 n)), 0 for all-gather and all-to-all. Throws std::invalid_argument for an unsupported pair.
[[nodiscard]] std::uint64_t scratch_bytes(Collective c, Algorithm a, std::uint32_t nranks, std::uint64_t count,
                                          std::uint32_t dtype_bytes);

// rank's schedule for one call. Throws std::invalid_argument (with the reason and what is
// supported) for an unsupported collective/algorithm pair, nranks == 0, rank >= nranks,
// dtype_bytes == 0, pipeline_chunks outside 1..kMaxPipelineChunks or above 1 for a non-ring
// algorithm, or sizes that overflow 64 bits. nranks == 1 is one step with one local copy.
[[nodiscard]] Schedule build_schedule(Collective c, Algorithm a, std::uint32_t nranks, std::uint32_t rank,
                                      std::uint64_t count, std::uint32_t dtype_bytes,
                                      const ScheduleOptions& options = {});

// Bytes this rank puts on the wire in one call (the sum of its writes).
[[nodiscard]] std::uint64_t wire_bytes(const Schedule& s);
// S for algbw = S / t: the full buffer in bytes (effective count x dtype bytes), which for
// all-gather and reduce-scatter is the total across ranks.
[[nodiscard]] std::uint64_t logical_bytes(Collective c, std::uint64_t count, std::uint32_t dtype_bytes,
                                          std::uint32_t nranks);
// busbw = algbw x bus_factor: 2(n-1)/n for all-reduce, (n-1)/n for the others (nccl-tests).
[[nodiscard]] double bus_factor(Collective c, std::uint32_t nranks);

}  // namespace fabench::coll
