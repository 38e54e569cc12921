// Pipelined rings (--pipeline, and fabench-coll's choice per size) give bit-identical outputs to
// the unpipelined ring on random data: sub-chunks change when a piece is reduced, not the order
// in which ranks' contributions are added to any element.
#include <catch2/catch.hpp>

#include "fabench/coll/simulate.hpp"
#include "fabench/collbench/session.hpp"

using namespace fabench::coll;

TEST_CASE("coll: pipelined ring outputs equal the unpipelined ring's bit for bit", "[coll][sim]") {
  for (const auto c : {Collective::kAllReduce, Collective::kReduceScatter}) {
    for (const auto t : {DType::kF32, DType::kBF16, DType::kF16}) {
      for (const std::uint32_t n : {2U, 3U, 5U, 8U}) {
        for (const std::uint64_t count : {1ULL, 7ULL, 1000ULL, 40'000ULL}) {
          SimConfig base;
          base.collective = c;
          base.algorithm = Algorithm::kRing;
          base.nranks = n;
          base.count = count;
          base.run.dtype = t;
          base.run.data = SimData::kRandom;
          base.run.seed = count + n;
          base.run.keep_outputs = true;
          const SimResult one = simulate(base);
          REQUIRE(one.ok());
          for (const std::uint32_t pipes : {2U, 3U, 8U}) {
            SimConfig cfg = base;
            cfg.options.pipeline_chunks = pipes;
            const SimResult many = simulate(cfg);
            INFO(collective_name(c) << " " << dtype_name(t) << " n=" << n << " count=" << count << " pipeline=" << pipes);
            REQUIRE(many.ok());
            CHECK(many.outputs == one.outputs);
          }
        }
      }
    }
  }
}

TEST_CASE("collbench: the ring's sub-chunks by default: 512 KiB and up, 1 to 8", "[collbench]") {
  using fabench::collbench::auto_pipeline_chunks;
  CHECK(auto_pipeline_chunks(4096, 2) == 1);
  CHECK(auto_pipeline_chunks(1 << 20, 2) == 1);
  CHECK(auto_pipeline_chunks(2 << 20, 2) == 2);
  CHECK(auto_pipeline_chunks(16 << 20, 4) == 8);
  CHECK(auto_pipeline_chunks(64ULL << 20, 2) == 8);
  CHECK(auto_pipeline_chunks(64ULL << 20, 1024) == 1);
}
