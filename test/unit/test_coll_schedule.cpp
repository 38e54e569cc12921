// Collective schedules: names, sizes, errors, step structure and wire accounting, against
// hand-computed values. Correctness of the data movement is test_coll_simulate.cpp's job.
#include <catch2/catch.hpp>

#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "fabench/base/error.hpp"
#include "fabench/coll/builder.hpp"
#include "fabench/coll/schedule.hpp"

using namespace fabench::coll;

TEST_CASE("coll: collective and algorithm names parse and print both ways", "[coll]") {
  for (auto c : {Collective::kAllReduce, Collective::kAllGather, Collective::kReduceScatter, Collective::kAllToAll}) {
    CHECK(parse_collective(collective_name(c)) == c);
  }
  for (auto a : {Algorithm::kRing, Algorithm::kRecursiveHalvingDoubling, Algorithm::kOneShot, Algorithm::kPairwise,
                 Algorithm::kAllAtOnce, Algorithm::kRecursiveDoubling}) {
    CHECK(parse_algorithm(algorithm_name(a)) == a);
  }
  CHECK(collective_name(Collective::kReduceScatter) == "reducescatter");
  CHECK(algorithm_name(Algorithm::kRecursiveHalvingDoubling) == "rhd");
  CHECK(algorithm_name(Algorithm::kRecursiveDoubling) == "rd");
  CHECK(parse_collective("all_reduce") == std::nullopt);
  CHECK(parse_collective("AllReduce") == std::nullopt);
  CHECK(parse_collective("") == std::nullopt);
  CHECK(parse_algorithm("tree") == std::nullopt);
  CHECK(parse_algorithm("ring ") == std::nullopt);
}

TEST_CASE("coll: unsupported combinations and bad parameters throw with the reason", "[coll]") {
  using Catch::Matchers::Contains;
  CHECK_THROWS_WITH(build_schedule(Collective::kAllToAll, Algorithm::kRecursiveHalvingDoubling, 4, 0, 16, 4),
                    Contains("rhd is not an algorithm for alltoall (supported: pairwise, allatonce)"));
  CHECK_THROWS_WITH(build_schedule(Collective::kAllGather, Algorithm::kOneShot, 4, 0, 16, 4),
                    Contains("(supported: ring)"));
  CHECK_THROWS_WITH(build_schedule(Collective::kAllReduce, Algorithm::kPairwise, 4, 0, 16, 4),
                    Contains("supported: ring, rhd, oneshot, rd"));
  CHECK_THROWS_WITH(build_schedule(Collective::kAllGather, Algorithm::kRecursiveDoubling, 4, 0, 16, 4),
                    Contains("rd is not an algorithm for allgather"));
  CHECK_THROWS_WITH(build_schedule(Collective::kAllReduce, Algorithm::kRing, 4, 4, 16, 4),
                    Contains("rank 4 is not below nranks 4"));
  CHECK_THROWS_AS(build_schedule(Collective::kAllReduce, Algorithm::kRing, 0, 0, 16, 4), fabench::UserError);
  CHECK_THROWS_AS(build_schedule(Collective::kAllReduce, Algorithm::kRing, kMaxRanks + 1, 0, 16, 4),
                  std::invalid_argument);
  CHECK_THROWS_WITH(build_schedule(Collective::kAllReduce, Algorithm::kRing, 4, 0, 16, 0), Contains("dtype_bytes"));
  CHECK_THROWS_WITH(build_schedule(Collective::kAllReduce, Algorithm::kRing, 4, 0, 16, 4, {0}),
                    Contains("pipeline_chunks must be within 1..1024"));
  CHECK_THROWS_WITH(build_schedule(Collective::kAllReduce, Algorithm::kOneShot, 4, 0, 16, 4, {2}),
                    Contains("pipeline_chunks applies to ring only"));
  CHECK_THROWS_WITH(build_schedule(Collective::kAllReduce, Algorithm::kOneShot, 4, 0, UINT64_MAX / 2, 4),
                    Contains("overflows"));
  CHECK_THROWS_AS(scratch_bytes(Collective::kAllToAll, Algorithm::kRing, 4, 16, 4), fabench::UserError);
  CHECK_NOTHROW(build_schedule(Collective::kAllReduce, Algorithm::kRing, 4, 3, 16, 4, {kMaxPipelineChunks}));
}

TEST_CASE("coll: sizes follow nccl-tests: count is the full buffer, rounded down to n where blocks must be equal",
          "[coll]") {
  CHECK(effective_count(Collective::kAllReduce, 10, 3) == 10);
  CHECK(effective_count(Collective::kAllGather, 10, 3) == 9);
  CHECK(effective_count(Collective::kReduceScatter, 10, 3) == 9);
  CHECK(effective_count(Collective::kAllToAll, 10, 3) == 9);
  CHECK(effective_count(Collective::kAllToAll, 2, 3) == 0);

  auto io = buffer_bytes(Collective::kAllReduce, 10, 4, 3);
  CHECK(io.input == 40);
  CHECK(io.output == 40);
  io = buffer_bytes(Collective::kAllGather, 10, 4, 3);
  CHECK(io.input == 12);
  CHECK(io.output == 36);
  io = buffer_bytes(Collective::kReduceScatter, 10, 4, 3);
  CHECK(io.input == 36);
  CHECK(io.output == 12);
  io = buffer_bytes(Collective::kAllToAll, 10, 2, 3);
  CHECK(io.input == 18);
  CHECK(io.output == 18);

  CHECK(logical_bytes(Collective::kAllReduce, 10, 4, 3) == 40);
  CHECK(logical_bytes(Collective::kAllGather, 10, 4, 3) == 36);  // S: the total across ranks
  CHECK(logical_bytes(Collective::kReduceScatter, 10, 4, 3) == 36);
}

TEST_CASE("coll: scratch per rank", "[coll]") {
  // Ring: (n-1) slots of ceil(count/n) elements.
  CHECK(scratch_bytes(Collective::kAllReduce, Algorithm::kRing, 4, 10, 4) == 3 * 3 * 4);
  CHECK(scratch_bytes(Collective::kReduceScatter, Algorithm::kRing, 4, 10, 4) == 3 * 2 * 4);  // count 8
  // RHD, n = 6 (p = 4): fold area 10, then ceil(10/2) + ceil(10/4).
  CHECK(scratch_bytes(Collective::kAllReduce, Algorithm::kRecursiveHalvingDoubling, 6, 10, 2) == (10 + 5 + 3) * 2);
  CHECK(scratch_bytes(Collective::kAllReduce, Algorithm::kRecursiveHalvingDoubling, 8, 10, 2) == (5 + 3 + 2) * 2);
  // One-shot: a whole vector from every other rank.
  CHECK(scratch_bytes(Collective::kAllReduce, Algorithm::kOneShot, 3, 5, 4) == 2 * 5 * 4);
  // Recursive doubling: fold area (n not a power of two), a slot per level, one more vector
  // from two levels on.
  CHECK(scratch_bytes(Collective::kAllReduce, Algorithm::kRecursiveDoubling, 2, 10, 4) == 1 * 10 * 4);
  CHECK(scratch_bytes(Collective::kAllReduce, Algorithm::kRecursiveDoubling, 3, 10, 4) == 2 * 10 * 4);
  CHECK(scratch_bytes(Collective::kAllReduce, Algorithm::kRecursiveDoubling, 4, 10, 4) == 3 * 10 * 4);
  CHECK(scratch_bytes(Collective::kAllReduce, Algorithm::kRecursiveDoubling, 6, 10, 2) == 4 * 10 * 2);
  CHECK(scratch_bytes(Collective::kAllReduce, Algorithm::kRecursiveDoubling, 8, 10, 2) == 4 * 10 * 2);
  // The level loops end at any rank count (a 32-bit doubling counter would wrap to 0 past 2^31).
  CHECK(scratch_bytes(Collective::kAllReduce, Algorithm::kRecursiveHalvingDoubling, UINT32_MAX, 1, 1) == 1 + 31);
  CHECK(scratch_bytes(Collective::kAllReduce, Algorithm::kRecursiveDoubling, UINT32_MAX, 1, 1) == 1 + 31 + 1);
  CHECK(scratch_bytes(Collective::kAllGather, Algorithm::kRing, 8, 64, 4) == 0);
  CHECK(scratch_bytes(Collective::kAllToAll, Algorithm::kPairwise, 8, 64, 4) == 0);
  CHECK(scratch_bytes(Collective::kAllReduce, Algorithm::kOneShot, 1, 64, 4) == 0);
  const Schedule s = build_schedule(Collective::kAllReduce, Algorithm::kRing, 4, 1, 10, 4);
  CHECK(s.scratch_bytes == 36);
  CHECK(s.input_bytes == 40);
  CHECK(s.output_bytes == 40);
}

TEST_CASE("coll: balanced blocks cover the count exactly, with no overflow", "[coll]") {
  CHECK(block_begin(10, 4, 0) == 0);
  CHECK(block_begin(10, 4, 1) == 2);
  CHECK(block_begin(10, 4, 2) == 5);
  CHECK(block_begin(10, 4, 3) == 7);
  CHECK(block_begin(10, 4, 4) == 10);
  CHECK(block_begin(2, 5, 5) == 2);
  CHECK(block_begin(2, 5, 3) == 1);  // floor(6/5)
  const std::uint64_t big = UINT64_MAX - 5;
  CHECK(block_begin(big, 1024, 1024) == big);
  CHECK(block_begin(big, 1024, 512) == big / 2);
}

TEST_CASE("coll: ring all-reduce step by step for 3 ranks and 6 floats", "[coll]") {
  // Blocks of 2 elements (8 bytes). Rank 0, step 0: send input block 2 (r-1) to rank 1's slot 0;
  // receive block 1 (r-2) from rank 2 and add input block 1 to it.
  const Schedule s = build_schedule(Collective::kAllReduce, Algorithm::kRing, 3, 0, 6, 4);
  REQUIRE(s.num_steps() == 4);
  const StepView st0 = s.step(0);
  REQUIRE(st0.writes.size() == 1);
  CHECK(st0.writes[0].dst_rank == 1);
  CHECK(st0.writes[0].src_buf == Buf::kInput);
  CHECK(st0.writes[0].src_offset == 16);
  CHECK(st0.writes[0].dst_buf == Buf::kScratch);
  CHECK(st0.writes[0].dst_offset == 0);
  CHECK(st0.writes[0].bytes == 8);
  REQUIRE(st0.expect_from.size() == 1);
  CHECK(st0.expect_from[0] == 2);
  REQUIRE(st0.ops.size() == 1);
  CHECK(st0.ops[0].kind == OpKind::kReduce);
  CHECK(st0.ops[0].src_buf == Buf::kInput);
  CHECK(st0.ops[0].src_offset == 8);
  CHECK(st0.ops[0].dst_buf == Buf::kScratch);
  CHECK(st0.ops[0].dst_offset == 0);
  // Step 1 ends the reduce-scatter: block 0 is complete in slot 1 and copied to output.
  const StepView st1 = s.step(1);
  REQUIRE(st1.ops.size() == 2);
  CHECK(st1.ops[1].kind == OpKind::kCopy);
  CHECK(st1.ops[1].src_buf == Buf::kScratch);
  CHECK(st1.ops[1].src_offset == 8);
  CHECK(st1.ops[1].dst_buf == Buf::kOutput);
  CHECK(st1.ops[1].dst_offset == 0);
  // Step 2: the all-gather sends the own block from output.
  const StepView st2 = s.step(2);
  REQUIRE(st2.writes.size() == 1);
  CHECK(st2.writes[0].src_buf == Buf::kOutput);
  CHECK(st2.writes[0].src_offset == 0);
  CHECK(st2.writes[0].dst_offset == 0);
  CHECK(st2.ops.empty());
}

TEST_CASE("coll: step counts are the same on every rank and as the algorithms promise", "[coll]") {
  for (std::uint32_t n : {2u, 3u, 5u, 8u, 12u}) {
    INFO("n = " << n);
    std::uint32_t levels = 0;
    while ((2u << levels) <= n) ++levels;
    const bool pow2 = (n & (n - 1)) == 0;
    for (std::uint32_t r = 0; r < n; ++r) {
      CHECK(build_schedule(Collective::kAllReduce, Algorithm::kRing, n, r, 100, 4).num_steps() == 2 * (n - 1));
      CHECK(build_schedule(Collective::kAllReduce, Algorithm::kRing, n, r, 100, 4, {3}).num_steps() == 2 * (n - 1) + 2);
      CHECK(build_schedule(Collective::kAllReduce, Algorithm::kRecursiveHalvingDoubling, n, r, 100, 4).num_steps() ==
            2 * levels + (pow2 ? 0 : 2));
      CHECK(build_schedule(Collective::kAllReduce, Algorithm::kRecursiveDoubling, n, r, 100, 4).num_steps() ==
            levels + (pow2 ? 0 : 2));
      CHECK(build_schedule(Collective::kAllReduce, Algorithm::kOneShot, n, r, 100, 4).num_steps() == 1);
      CHECK(build_schedule(Collective::kAllGather, Algorithm::kRing, n, r, 100, 4).num_steps() == n - 1);
      CHECK(build_schedule(Collective::kAllToAll, Algorithm::kPairwise, n, r, 100, 4).num_steps() == n - 1);
      CHECK(build_schedule(Collective::kAllToAll, Algorithm::kAllAtOnce, n, r, 100, 4).num_steps() == 1);
    }
  }
  const Schedule one = build_schedule(Collective::kAllReduce, Algorithm::kRecursiveHalvingDoubling, 1, 0, 7, 4);
  REQUIRE(one.num_steps() == 1);
  CHECK(one.writes.empty());
  REQUIRE(one.ops.size() == 1);
  CHECK(one.ops[0].bytes == 28);
}

TEST_CASE("coll: pairwise all-to-all pairs by xor for a power of two, by shift otherwise", "[coll]") {
  const Schedule p4 = build_schedule(Collective::kAllToAll, Algorithm::kPairwise, 4, 1, 8, 4);
  CHECK(p4.step(0).writes[0].dst_rank == 0);
  CHECK(p4.step(0).expect_from[0] == 0);
  CHECK(p4.step(1).writes[0].dst_rank == 3);
  CHECK(p4.step(1).expect_from[0] == 3);
  const Schedule p5 = build_schedule(Collective::kAllToAll, Algorithm::kPairwise, 5, 1, 10, 4);
  CHECK(p5.step(0).writes[0].dst_rank == 2);
  CHECK(p5.step(0).expect_from[0] == 0);
  CHECK(p5.step(3).writes[0].dst_rank == 0);
  CHECK(p5.step(3).expect_from[0] == 2);
  // Block `to` of the input goes to block `rank` of the peer's output.
  CHECK(p5.step(0).writes[0].src_offset == 2 * 2 * 4);
  CHECK(p5.step(0).writes[0].dst_offset == 1 * 2 * 4);
}

TEST_CASE("coll: zero-byte transfers do not exist: count below nranks leaves empty blocks out", "[coll]") {
  for (std::uint32_t r = 0; r < 8; ++r) {
    for (auto a :
         {Algorithm::kRing, Algorithm::kRecursiveHalvingDoubling, Algorithm::kOneShot, Algorithm::kRecursiveDoubling}) {
      const Schedule s = build_schedule(Collective::kAllReduce, a, 8, r, 3, 4);
      for (const Transfer& t : s.writes) CHECK(t.bytes > 0);
      for (const LocalOp& o : s.ops) CHECK(o.bytes > 0);
    }
  }
  // Count 1 on 8 ranks: only the block holding the element moves; 7 of 8 ring blocks are empty.
  std::uint64_t total = 0;
  for (std::uint32_t r = 0; r < 8; ++r) {
    total += wire_bytes(build_schedule(Collective::kAllReduce, Algorithm::kRing, 8, r, 1, 4));
  }
  CHECK(total == 2 * 7 * 4);  // 7 hops to reduce the one element, 7 to spread it
  const Schedule empty = build_schedule(Collective::kAllGather, Algorithm::kRing, 8, 3, 7, 4);
  CHECK(empty.count == 0);
  CHECK(empty.num_steps() == 7);
  CHECK(empty.writes.empty());
  CHECK(empty.expect_from.empty());
}

TEST_CASE("coll: wire bytes: ring all-reduce moves 2(n-1)/n S per rank, the others as their models say", "[coll]") {
  for (std::uint32_t n : {2u, 3u, 4u, 7u, 8u, 16u}) {
    INFO("n = " << n);
    const std::uint64_t count = 24ull * 35 * n;  // divisible by n (and by every power of two up to 16)
    const std::uint64_t s = count * 4;
    for (std::uint32_t r = 0; r < n; ++r) {
      CHECK(wire_bytes(build_schedule(Collective::kAllReduce, Algorithm::kRing, n, r, count, 4)) ==
            2 * (n - 1) * s / n);
      CHECK(wire_bytes(build_schedule(Collective::kAllReduce, Algorithm::kRing, n, r, count, 4, {5})) ==
            2 * (n - 1) * s / n);
      CHECK(wire_bytes(build_schedule(Collective::kAllReduce, Algorithm::kOneShot, n, r, count, 4)) == (n - 1) * s);
      CHECK(wire_bytes(build_schedule(Collective::kAllGather, Algorithm::kRing, n, r, count, 4)) == (n - 1) * s / n);
      CHECK(wire_bytes(build_schedule(Collective::kReduceScatter, Algorithm::kRing, n, r, count, 4)) ==
            (n - 1) * s / n);
      CHECK(wire_bytes(build_schedule(Collective::kAllToAll, Algorithm::kPairwise, n, r, count, 4)) == (n - 1) * s / n);
      CHECK(wire_bytes(build_schedule(Collective::kAllToAll, Algorithm::kAllAtOnce, n, r, count, 4)) ==
            (n - 1) * s / n);
      if ((n & (n - 1)) == 0) {
        CHECK(wire_bytes(build_schedule(Collective::kAllReduce, Algorithm::kRecursiveHalvingDoubling, n, r, count,
                                        4)) == 2 * (n - 1) * s / n);
        // Recursive doubling: the whole vector once per level.
        std::uint64_t levels = 0;
        while ((2u << levels) <= n) ++levels;
        CHECK(wire_bytes(build_schedule(Collective::kAllReduce, Algorithm::kRecursiveDoubling, n, r, count, 4)) ==
              levels * s);
      }
    }
  }
  // Uneven chunks: across all ranks the ring still moves exactly 2(n-1) S.
  for (std::uint64_t count : {1ull, 5ull, 6ull, 7ull, 1001ull}) {
    std::uint64_t total = 0;
    for (std::uint32_t r = 0; r < 6; ++r) {
      total += wire_bytes(build_schedule(Collective::kAllReduce, Algorithm::kRing, 6, r, count, 2));
    }
    CHECK(total == 2 * 5 * count * 2);
  }
}

TEST_CASE("coll: bus factors are nccl-tests'", "[coll]") {
  CHECK(bus_factor(Collective::kAllReduce, 8) == 2.0 * 7.0 / 8.0);
  CHECK(bus_factor(Collective::kAllReduce, 2) == 1.0);
  CHECK(bus_factor(Collective::kAllGather, 8) == 7.0 / 8.0);
  CHECK(bus_factor(Collective::kReduceScatter, 4) == 0.75);
  CHECK(bus_factor(Collective::kAllToAll, 1024) == 1023.0 / 1024.0);
  CHECK(bus_factor(Collective::kAllReduce, 1) == 0.0);
}

TEST_CASE("coll: pipelined ring keeps several sub-chunks in flight per step", "[coll]") {
  // 4 ranks, 3 sub-chunks: 2*3 + 2 steps; in step 2 sub-chunks 0, 1 and 2 are all on the wire
  // (at reduce-scatter stages 2, 1 and 0), each a third of a 30-element block.
  const Schedule s = build_schedule(Collective::kAllReduce, Algorithm::kRing, 4, 0, 120, 4, {3});
  REQUIRE(s.num_steps() == 8);
  CHECK(s.step(0).writes.size() == 1);
  CHECK(s.step(1).writes.size() == 2);
  const StepView st2 = s.step(2);
  REQUIRE(st2.writes.size() == 3);
  for (const Transfer& t : st2.writes) {
    CHECK(t.bytes == 40);
    CHECK(t.dst_rank == 1);
  }
  CHECK(st2.expect_from.size() == 3);
  CHECK(s.step(7).writes.size() == 1);
  CHECK(s.pipeline_chunks == 3);
  CHECK(s.scratch_bytes == build_schedule(Collective::kAllReduce, Algorithm::kRing, 4, 0, 120, 4).scratch_bytes);
}
