// Every collective/algorithm run by the in-memory executor, for n = 1..64 and a spread up to
// 1024, with counts of 1, below n, not divisible by n and larger: outputs bit-exact against the
// expected, identical across ranks, and no hazard rule broken. Then the checker itself, fed
// schedules that break each rule.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "fabench/base/error.hpp"
#include "fabench/coll/builder.hpp"
#include "fabench/coll/simulate.hpp"

using namespace fabench::coll;

namespace {

// Unoptimised builds (the asan preset) run the simulator ~15x slower; there the large-n sweep
// stops at 256 so that each test stays well inside ctest's 60 s. Optimised builds run it all.
#ifdef NDEBUG
const std::vector<std::uint32_t> kLargeRanks = {100, 127, 128, 255, 256, 512, 1000, 1023, 1024};
#else
const std::vector<std::uint32_t> kLargeRanks = {100, 127, 128, 255, 256};
#endif

std::vector<std::uint32_t> small_ranks() {
  std::vector<std::uint32_t> v;
  for (std::uint32_t n = 1; n <= 64; ++n) v.push_back(n);
  return v;
}

// Counts for n ranks: 1, below n, not divisible, and (for small n) a larger one.
std::vector<std::uint64_t> counts_for(std::uint32_t n, bool large_n) {
  std::vector<std::uint64_t> v = {1, n > 1 ? n - 1 : 2, 3ull * n + 1};
  if (!large_n) v.push_back(1031);
  return v;
}

void check_sim(const SimConfig& cfg) {
  const SimResult r = simulate(cfg);
  INFO(collective_name(cfg.collective) << "/" << algorithm_name(cfg.algorithm) << " n=" << cfg.nranks
                                       << " count=" << cfg.count << " pipeline=" << cfg.options.pipeline_chunks
                                       << " dtype=" << dtype_name(cfg.run.dtype) << " op=" << reduce_op_name(cfg.run.op)
                                       << ": " << r.error << " " << r.first_wrong);
  CHECK(r.ok());
}

void sweep(Collective c, Algorithm a, const std::vector<std::uint32_t>& ranks, bool large_n, std::uint32_t pipes = 1) {
  for (std::uint32_t n : ranks) {
    for (std::uint64_t count : counts_for(n, large_n)) {
      SimConfig cfg;
      cfg.collective = c;
      cfg.algorithm = a;
      cfg.nranks = n;
      cfg.count = count;
      cfg.options.pipeline_chunks = pipes;
      check_sim(cfg);
    }
  }
}

// Metadata for a hand-built two-rank "all-reduce" of `count` floats (no steps yet).
Schedule blank(std::uint32_t rank, std::uint64_t count = 4) {
  BuildParams p;
  p.collective = Collective::kAllReduce;
  p.algorithm = Algorithm::kOneShot;  // scratch: one vector
  p.nranks = 2;
  p.rank = rank;
  p.count = count;
  p.dtype_bytes = 4;
  return schedule_meta(p);
}

// A rank that does nothing for `steps` steps.
Schedule idle(std::uint32_t rank, std::size_t steps = 1) { return ScheduleBuilder(blank(rank), steps).finish(); }

std::string run_error(std::vector<Schedule> s) { return run_schedules(s, RunConfig{}).error; }

}  // namespace

TEST_CASE("coll: ring all-reduce is exact for 1..64 ranks and any count", "[coll][sim]") {
  sweep(Collective::kAllReduce, Algorithm::kRing, small_ranks(), false);
}

TEST_CASE("coll: ring all-reduce is exact up to 1024 ranks", "[coll][sim]") {
  sweep(Collective::kAllReduce, Algorithm::kRing, kLargeRanks, true);
}

TEST_CASE("coll: pipelined rings are exact", "[coll][sim]") {
  const std::vector<std::uint32_t> ranks = {2, 3, 4, 5, 8, 13, 16, 64};
  for (std::uint32_t pipes : {2u, 3u, 7u}) {
    sweep(Collective::kAllReduce, Algorithm::kRing, ranks, false, pipes);
    sweep(Collective::kAllGather, Algorithm::kRing, ranks, false, pipes);
    sweep(Collective::kReduceScatter, Algorithm::kRing, ranks, false, pipes);
  }
}

TEST_CASE("coll: recursive halving-doubling all-reduce is exact for 1..64 ranks and up to 1024", "[coll][sim]") {
  sweep(Collective::kAllReduce, Algorithm::kRecursiveHalvingDoubling, small_ranks(), false);
  sweep(Collective::kAllReduce, Algorithm::kRecursiveHalvingDoubling, kLargeRanks, true);
}

TEST_CASE("coll: recursive doubling all-reduce is exact for 1..64 ranks and up to 1024", "[coll][sim]") {
  sweep(Collective::kAllReduce, Algorithm::kRecursiveDoubling, small_ranks(), false);
  sweep(Collective::kAllReduce, Algorithm::kRecursiveDoubling, kLargeRanks, true);
}

TEST_CASE("coll: one-shot all-reduce is exact for 1..64 ranks and up to 1024", "[coll][sim]") {
  sweep(Collective::kAllReduce, Algorithm::kOneShot, small_ranks(), false);
  // (n-1) x count of scratch per rank: keep the count small at large n.
  for (std::uint32_t n : kLargeRanks) {
    for (std::uint64_t count : {1ull, 5ull}) {
      SimConfig cfg;
      cfg.algorithm = Algorithm::kOneShot;
      cfg.nranks = n;
      cfg.count = count;
      check_sim(cfg);
    }
  }
}

TEST_CASE("coll: ring all-gather is exact for 1..64 ranks and up to 1024", "[coll][sim]") {
  sweep(Collective::kAllGather, Algorithm::kRing, small_ranks(), false);
  sweep(Collective::kAllGather, Algorithm::kRing, kLargeRanks, true);
}

TEST_CASE("coll: ring reduce-scatter is exact for 1..64 ranks and up to 1024", "[coll][sim]") {
  sweep(Collective::kReduceScatter, Algorithm::kRing, small_ranks(), false);
  sweep(Collective::kReduceScatter, Algorithm::kRing, kLargeRanks, true);
}

TEST_CASE("coll: pairwise all-to-all is exact for 1..64 ranks and up to 1024", "[coll][sim]") {
  sweep(Collective::kAllToAll, Algorithm::kPairwise, small_ranks(), false);
  sweep(Collective::kAllToAll, Algorithm::kPairwise, kLargeRanks, true);
}

TEST_CASE("coll: all-at-once all-to-all is exact for 1..64 ranks and up to 1024", "[coll][sim]") {
  sweep(Collective::kAllToAll, Algorithm::kAllAtOnce, small_ranks(), false);
  sweep(Collective::kAllToAll, Algorithm::kAllAtOnce, kLargeRanks, true);
}

TEST_CASE("coll: every type and reduction is exact through every all-reduce algorithm", "[coll][sim]") {
  for (DType t : {DType::kF32, DType::kBF16, DType::kF16}) {
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax}) {
      for (Algorithm a : {Algorithm::kRing, Algorithm::kRecursiveHalvingDoubling, Algorithm::kOneShot,
                          Algorithm::kRecursiveDoubling}) {
        for (std::uint32_t n : {2u, 3u, 6u, 8u, 13u, 37u, 100u}) {
          SimConfig cfg;
          cfg.algorithm = a;
          cfg.nranks = n;
          cfg.count = 5ull * n + 3;
          cfg.run.dtype = t;
          cfg.run.op = op;
          cfg.run.seed = 7 + n;
          check_sim(cfg);
        }
      }
      SimConfig rs;
      rs.collective = Collective::kReduceScatter;
      rs.nranks = 12;
      rs.count = 12 * 9;
      rs.run.dtype = t;
      rs.run.op = op;
      check_sim(rs);
    }
  }
  // bf16 sums at the most ranks: the sparse exact data, through the longest schedules.
  SimConfig big;
  big.nranks = kLargeRanks.back();
  big.count = 2000;
  big.run.dtype = DType::kBF16;
  check_sim(big);
}

TEST_CASE("coll: inexact data still gives bitwise identical all-reduce results on every rank", "[coll][sim]") {
  for (DType t : {DType::kF32, DType::kBF16, DType::kF16}) {
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax}) {
      for (Algorithm a : {Algorithm::kRing, Algorithm::kRecursiveHalvingDoubling, Algorithm::kOneShot,
                          Algorithm::kRecursiveDoubling}) {
        for (std::uint32_t n : {2u, 3u, 5u, 8u, 12u, 33u, 64u, 255u}) {
          SimConfig cfg;
          cfg.algorithm = a;
          cfg.nranks = n;
          cfg.count = a == Algorithm::kOneShot && n > 64 ? 9 : 7ull * n + 5;
          cfg.run.dtype = t;
          cfg.run.op = op;
          cfg.run.data = SimData::kRandom;
          cfg.run.seed = n;
          if (a == Algorithm::kRing) cfg.options.pipeline_chunks = 3;
          check_sim(cfg);
        }
      }
    }
  }
}

TEST_CASE("coll: the identical check can fail: one-shot reducing in each rank's own order", "[coll][sim]") {
  // Each rank starts with its own vector and goes round: the same sum, different roundings.
  const std::uint32_t n = 4;
  const std::uint64_t count = 64;
  std::vector<Schedule> s;
  for (std::uint32_t r = 0; r < n; ++r) {
    Schedule good = build_schedule(Collective::kAllReduce, Algorithm::kOneShot, n, r, count, 4);
    ScheduleBuilder b(good, 1);
    for (const Transfer& t : good.writes) {
      b.write(0, t.dst_rank, {t.src_buf, t.src_offset}, {t.dst_buf, t.dst_offset}, t.bytes);
    }
    for (std::uint32_t from : good.expect_from) b.expect(0, from, count * 4);
    const auto vec = [&](std::uint32_t src) -> Region {
      return src == r ? Region{Buf::kInput, 0} : Region{Buf::kScratch, (src < r ? src : src - 1) * count * 4};
    };
    b.copy(0, vec(r), {Buf::kOutput, 0}, count * 4);
    for (std::uint32_t i = 1; i < n; ++i) b.reduce(0, vec((r + i) % n), {Buf::kOutput, 0}, count * 4);
    s.push_back(std::move(b).finish());
  }
  RunConfig exact;
  CHECK(run_schedules(s, exact).ok());  // integers: any order is exact
  RunConfig random;
  random.data = SimData::kRandom;
  const SimResult r = run_schedules(s, random);
  CHECK(r.error.empty());
  CHECK_FALSE(r.identical);
}

TEST_CASE("coll: the simulator reports wrong outputs and keeps them when asked", "[coll][sim]") {
  std::vector<Schedule> s;
  for (std::uint32_t r = 0; r < 3; ++r) {
    s.push_back(build_schedule(Collective::kAllToAll, Algorithm::kAllAtOnce, 3, r, 6, 4));
  }
  RunConfig cfg;
  cfg.keep_outputs = true;
  const SimResult good = run_schedules(s, cfg);
  CHECK(good.ok());
  REQUIRE(good.outputs.size() == 3);
  CHECK(good.outputs[2].size() == 24);
  CHECK(good.steps == 1);
  CHECK(good.wire_bytes == 3 * 2 * 8);
  // Rank 0 sends its own block to everyone: no rule broken, but ranks 1 and 2 get wrong data.
  for (Transfer& t : s[0].writes) t.src_offset = 0;
  const SimResult bad = run_schedules(s, cfg);
  CHECK(bad.error.empty());
  CHECK(bad.wrong == 4);
  CHECK(bad.first_wrong.rfind("rank 1 element 0: got ", 0) == 0);
  CHECK_FALSE(bad.ok());
}

TEST_CASE("coll: the checker catches a second transfer to the same bytes (rule A)", "[coll][sim]") {
  Schedule a0 = blank(0);
  Schedule a1 = blank(1);
  ScheduleBuilder b0(a0, 2);
  ScheduleBuilder b1(a1, 2);
  b0.write(0, 1, {Buf::kInput, 0}, {Buf::kScratch, 0}, 16);
  b0.write(1, 1, {Buf::kInput, 0}, {Buf::kScratch, 8}, 8);
  b1.expect(0, 0, 16);
  b1.expect(1, 0, 8);
  const std::string err = run_error({std::move(b0).finish(), std::move(b1).finish()});
  CHECK_THAT(err, Catch::Matchers::Contains("rule A"));
  CHECK_THAT(err, Catch::Matchers::Contains("step 1"));
  CHECK_THAT(err, Catch::Matchers::Contains("rank 1 scratch byte 8"));
}

TEST_CASE("coll: the checker catches a landing on bytes the receiver already used (rule B)", "[coll][sim]") {
  Schedule a0 = blank(0);
  Schedule a1 = blank(1);
  ScheduleBuilder b0(a0, 2);
  ScheduleBuilder b1(a1, 2);
  b1.copy(0, {Buf::kInput, 0}, {Buf::kOutput, 0}, 16);     // rank 1 writes its output in step 0 ...
  b0.write(1, 1, {Buf::kInput, 0}, {Buf::kOutput, 4}, 4);  // ... which rank 0 may still overwrite
  b1.expect(1, 0, 4);
  CHECK_THAT(run_error({std::move(b0).finish(), std::move(b1).finish()}), Catch::Matchers::Contains("rule B"));
  // Reading it is as bad: the owner's write source in the step that expects the landing.
  Schedule c0 = blank(0);
  Schedule c1 = blank(1);
  ScheduleBuilder d0(c0, 2);
  ScheduleBuilder d1(c1, 2);
  d0.write(0, 1, {Buf::kInput, 0}, {Buf::kScratch, 0}, 16);
  d1.expect(0, 0, 16);
  d1.write(1, 0, {Buf::kScratch, 0}, {Buf::kScratch, 0}, 16);
  d0.expect(1, 1, 16);
  d0.write(1, 1, {Buf::kInput, 0}, {Buf::kScratch, 0}, 16);  // also rule A at rank 1
  d1.expect(1, 0, 16);
  CHECK_THAT(run_error({std::move(d0).finish(), std::move(d1).finish()}), Catch::Matchers::Contains("rule"));
}

TEST_CASE("coll: the checker catches an op overwriting what the same step sends (rule C)", "[coll][sim]") {
  Schedule a0 = blank(0);
  Schedule a1 = blank(1);
  ScheduleBuilder b0(a0, 2);
  ScheduleBuilder b1(a1, 2);
  b0.copy(0, {Buf::kInput, 0}, {Buf::kOutput, 0}, 16);
  b0.write(1, 1, {Buf::kOutput, 0}, {Buf::kOutput, 0}, 16);
  b0.reduce(1, {Buf::kInput, 0}, {Buf::kOutput, 8}, 8);  // changes bytes the NIC may still read
  b1.expect(1, 0, 16);
  const std::string err = run_error({std::move(b0).finish(), std::move(b1).finish()});
  CHECK_THAT(err, Catch::Matchers::Contains("rule C"));
  CHECK_THAT(err, Catch::Matchers::Contains("rank 0"));
}

TEST_CASE("coll: the checker catches reads of unwritten bytes and writes into input (rule D)", "[coll][sim]") {
  Schedule a0 = blank(0);
  Schedule a1 = blank(1);
  ScheduleBuilder b0(a0, 1);
  ScheduleBuilder b1(a1, 1);
  b0.write(0, 1, {Buf::kScratch, 0}, {Buf::kScratch, 0}, 16);
  b1.expect(0, 0, 16);
  CHECK_THAT(run_error({std::move(b0).finish(), std::move(b1).finish()}),
             Catch::Matchers::Contains("before anything wrote it (rule D)"));

  Schedule c0 = blank(0);
  Schedule c1 = blank(1);
  ScheduleBuilder d0(c0, 1);
  ScheduleBuilder d1(c1, 1);
  d0.write(0, 1, {Buf::kInput, 0}, {Buf::kInput, 0}, 16);
  d1.expect(0, 0, 16);
  CHECK_THAT(run_error({std::move(d0).finish(), std::move(d1).finish()}), Catch::Matchers::Contains("input (rule D)"));

  Schedule e0 = blank(0);
  ScheduleBuilder f0(e0, 1);
  f0.reduce(0, {Buf::kInput, 0}, {Buf::kOutput, 0}, 16);
  CHECK_THAT(run_error({std::move(f0).finish(), idle(1)}), Catch::Matchers::Contains("reduce into output"));
}

TEST_CASE("coll: the checker catches unexpected, missing and out-of-bounds transfers", "[coll][sim]") {
  using Catch::Matchers::Contains;
  {
    ScheduleBuilder b0(blank(0), 1);
    b0.write(0, 1, {Buf::kInput, 0}, {Buf::kScratch, 0}, 16);
    CHECK_THAT(run_error({std::move(b0).finish(), idle(1)}),
               Contains("rank 1 expects arrivals from [] but gets them from [0]"));
  }
  {
    ScheduleBuilder b1(blank(1), 1);
    b1.expect(0, 0, 16);
    CHECK_THAT(run_error({idle(0), std::move(b1).finish()}),
               Contains("expects arrivals from [0] but gets them from []"));
  }
  {
    ScheduleBuilder b0(blank(0), 1);
    ScheduleBuilder b1(blank(1), 1);
    b0.write(0, 1, {Buf::kInput, 8}, {Buf::kScratch, 0}, 16);
    b1.expect(0, 0, 16);
    CHECK_THAT(run_error({std::move(b0).finish(), std::move(b1).finish()}), Contains("beyond its 16 bytes"));
  }
  {
    ScheduleBuilder b0(blank(0), 1);
    ScheduleBuilder b1(blank(1), 1);
    b0.write(0, 1, {Buf::kInput, 2}, {Buf::kScratch, 0}, 4);
    b1.expect(0, 0, 4);
    CHECK_THAT(run_error({std::move(b0).finish(), std::move(b1).finish()}), Contains("not aligned"));
  }
  {
    ScheduleBuilder b0(blank(0), 1);
    b0.write(0, 0, {Buf::kInput, 0}, {Buf::kScratch, 0}, 4);
    CHECK_THAT(run_error({std::move(b0).finish(), idle(1)}), Contains("write to rank 0"));
  }
  {
    ScheduleBuilder b0(blank(0), 1);
    b0.copy(0, {Buf::kInput, 0}, {Buf::kOutput, 0}, 16);
    b0.copy(0, {Buf::kOutput, 0}, {Buf::kOutput, 4}, 8);
    CHECK_THAT(run_error({std::move(b0).finish(), idle(1)}), Contains("overlap"));
  }
  CHECK_THAT(run_error({idle(0), idle(0)}), Contains("schedule 1 does not describe the same call"));
  CHECK_THAT(run_error({idle(0), idle(1, 2)}), Contains("schedule 1 does not describe the same call"));
  CHECK_THAT(run_error({idle(0)}), Contains("1 schedules for 2 ranks"));
  CHECK_THROWS_AS(ScheduleBuilder(blank(0), 1).write(1, 1, {}, {}, 4), fabench::RunError);
}

TEST_CASE("coll: a real schedule broken by one offset is caught", "[coll][sim]") {
  // One-shot with every rank's slot at offset 0: three ranks land in the same place.
  std::vector<Schedule> s;
  for (std::uint32_t r = 0; r < 3; ++r) {
    s.push_back(build_schedule(Collective::kAllReduce, Algorithm::kOneShot, 3, r, 8, 4));
    for (Transfer& t : s.back().writes) t.dst_offset = 0;
  }
  CHECK_THAT(run_schedules(s, RunConfig{}).error, Catch::Matchers::Contains("rule A"));
  // Ring all-reduce whose all-gather lands in scratch slot 0 (where reduce-scatter step 0
  // landed) instead of output.
  std::vector<Schedule> ring;
  for (std::uint32_t r = 0; r < 4; ++r) {
    ring.push_back(build_schedule(Collective::kAllReduce, Algorithm::kRing, 4, r, 16, 4));
    for (Transfer& t : ring.back().writes) {
      if (t.dst_buf == Buf::kOutput) {
        t.dst_buf = Buf::kScratch;
        t.dst_offset = 0;
      }
    }
  }
  const std::string err = run_schedules(ring, RunConfig{}).error;
  CHECK_THAT(err, Catch::Matchers::Contains("step 3: rank 0 scratch byte 0"));
  CHECK_THAT(err, Catch::Matchers::Contains("(from rank 3) in one call (rule A)"));
}
