// fabench-congest's command line: the benchmarks, the roles and the bad inputs it refuses.
#include <algorithm>
#include <map>

#include <catch2/catch.hpp>

#include "fabench/base/error.hpp"
#include "fabench/congestbench/app.hpp"

namespace cb = fabench::congestbench;

namespace {
std::vector<std::string> names_of(const cb::Cli& c) {
  std::vector<std::string> out;
  for (const auto& b : cb::build_benches(c)) out.push_back(b.name());
  return out;
}
}  // namespace

TEST_CASE("fabench-congest: one benchmark per victim test and pattern, in flag order", "[congest][cli]") {
  cb::Cli c;
  CHECK(names_of(c) == std::vector<std::string>{"congest/latency/incast", "congest/latency/put-incast",
                                                "congest/latency/get-broadcast", "congest/latency/all-to-all",
                                                "congest/bandwidth/incast", "congest/bandwidth/put-incast",
                                                "congest/bandwidth/get-broadcast", "congest/bandwidth/all-to-all",
                                                "congest/allreduce/incast", "congest/allreduce/put-incast",
                                                "congest/allreduce/get-broadcast", "congest/allreduce/all-to-all"});
  c.tests = "bandwidth";
  c.patterns = "incast";
  c.ratio = "3:1";
  CHECK(names_of(c) == std::vector<std::string>{"congest/bandwidth/incast-3:1"});
  CHECK(cb::build_benches(c).front().senders == 3);
  CHECK(cb::victim_iterations(c, cb::VictimTest::kBandwidth) == 200);
  CHECK(cb::victim_iterations(c, cb::VictimTest::kLatency) == 2000);
  CHECK(cb::victim_iterations(c, cb::VictimTest::kAllReduce) == 1000);
  c.iters = 7;
  CHECK(cb::victim_iterations(c, cb::VictimTest::kLatency) == 7);
  CHECK(cb::congestor_bytes(c) == 4096);
}

TEST_CASE("fabench-congest: bad flags are one-line user errors", "[congest][cli]") {
  using Catch::Contains;
  using fabench::UserError;
  cb::Cli c;
  c.patterns = "all-to-all";
  c.ratio = "2:1";
  CHECK_THROWS_WITH(cb::build_benches(c), Contains("--ratio goes with incast and put-incast, not all-to-all"));
  c = {};
  c.tests = "latency,jitter";
  CHECK_THROWS_WITH(cb::build_benches(c), Contains("unknown victim test \"jitter\" (latency, bandwidth, allreduce)"));
  c = {};
  c.patterns = "incast,nope";
  CHECK_THROWS_AS(cb::build_benches(c), UserError);
  c = {};
  c.congestor_size = "0";
  CHECK_THROWS_AS(cb::build_benches(c), UserError);
  c.congestor_size = "128M";
  CHECK_THROWS_WITH(cb::build_benches(c), Contains("--congestor-size 128M: from 1 to 64M"));
}

TEST_CASE("fabench-congest: roles by shuffle or by name, the same on every rank", "[congest][cli]") {
  cb::Cli c;
  const auto a = cb::roles_of(c, 10);
  const auto b = cb::roles_of(c, 10);
  CHECK(a.congestors == b.congestors);
  CHECK(a.congestors.size() == 8);
  CHECK(a.victims.size() == 2);
  c.congestor_ranks = "1-3";
  const auto n = cb::roles_of(c, 6);
  CHECK(n.congestors == std::vector<std::uint32_t>{1, 2, 3});
  CHECK(n.victims == std::vector<std::uint32_t>{0, 4, 5});
  c.congestor_ranks = "0-4";  // one victim left: no ring
  CHECK_THROWS_AS(cb::roles_of(c, 6), fabench::UserError);
}

TEST_CASE("fabench-congest: the victims' all-reduce speaks world ranks, and every write is expected", "[congest]") {
  const auto roles = fabench::congest::named_roles(8, std::vector<std::uint32_t>{1, 2, 3});  // victims 0,4,5,6,7
  REQUIRE(roles.victims == std::vector<std::uint32_t>{0, 4, 5, 6, 7});
  std::map<std::uint32_t, fabench::coll::Schedule> by_rank;
  for (const auto v : roles.victims) by_rank.emplace(v, cb::victims_allreduce(roles, v));
  for (const auto& [rank, s] : by_rank) {
    CHECK(s.nranks == 5);
    CHECK(roles.victims.at(s.rank) == rank);
    CHECK(s.input_bytes == cb::kAllReduceFloats * sizeof(float));
    for (std::size_t k = 0; k < s.num_steps(); ++k) {
      for (const auto& t : s.step(k).writes) {
        INFO("rank " << rank << " step " << k << " writes to " << t.dst_rank);
        REQUIRE(roles.is_victim(t.dst_rank));
        CHECK(t.dst_rank != rank);
        // the receiver expects this sender in the same step as often as it writes there
        const auto& to = by_rank.at(t.dst_rank).step(k);
        const auto writes = std::count_if(s.step(k).writes.begin(), s.step(k).writes.end(),
                                          [&](const auto& w) { return w.dst_rank == t.dst_rank; });
        CHECK(std::count(to.expect_from.begin(), to.expect_from.end(), rank) == writes);
      }
    }
  }
  CHECK_THROWS_AS(cb::victims_allreduce(roles, 2), fabench::RunError);  // a congestor
}
