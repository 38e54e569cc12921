// Attempt / PairResult <-> JSON (what a rank sends rank 0 in fabench-accept), and the two halves
// of a pair combined into one attempt.
#include <cmath>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "fabench/accept/error.hpp"
#include "fabench/accept/result_json.hpp"
#include "fabench/acceptbench/measure.hpp"

using fabench::accept::AcceptError;
using fabench::accept::Attempt;
using fabench::accept::PairResult;
using fabench::accept::Status;
using nlohmann::json;

namespace {

Attempt full() {
  Attempt a;
  a.status = Status::kTimeout;
  a.reason = "B: timeout: latency: nothing from rank 3 for 8 s";
  a.qps = 4;
  a.duration_s = 3.25;
  a.bw_a_to_b_gbps = 97.5;
  a.bw_b_to_a_gbps = 96.25;
  a.bw_bidir_gbps = 190.5;
  a.lat_p50_us = 2.5;
  a.lat_p99_us = 3.75;
  a.lat_max_us = 12;
  a.lanes_a_to_b_gbps = {24.5, 24.25, 24.5, 24.25};
  a.lanes_b_to_a_gbps = {24, 24, 24.25, 24};
  a.counters_a = {{"port_xmit_data", 123456789012LL}, {"symbol_error", 0}};
  a.counters_b = {{"rcvd_seq_err", -2}};
  return a;
}

void require_same(const Attempt& x, const Attempt& y) {
  auto same = [](double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; };
  CHECK(x.status == y.status);
  CHECK(x.reason == y.reason);
  CHECK(x.qps == y.qps);
  CHECK(x.duration_s == y.duration_s);
  CHECK(same(x.bw_a_to_b_gbps, y.bw_a_to_b_gbps));
  CHECK(same(x.bw_b_to_a_gbps, y.bw_b_to_a_gbps));
  CHECK(same(x.bw_bidir_gbps, y.bw_bidir_gbps));
  CHECK(same(x.lat_p50_us, y.lat_p50_us));
  CHECK(same(x.lat_p99_us, y.lat_p99_us));
  CHECK(same(x.lat_max_us, y.lat_max_us));
  CHECK(x.lanes_a_to_b_gbps == y.lanes_a_to_b_gbps);
  CHECK(x.lanes_b_to_a_gbps == y.lanes_b_to_a_gbps);
  CHECK(x.counters_a == y.counters_a);
  CHECK(x.counters_b == y.counters_b);
}

}  // namespace

TEST_CASE("accept: an attempt survives JSON text both ways", "[accept]") {
  const Attempt a = full();
  require_same(fabench::accept::attempt_from_json(json::parse(fabench::accept::attempt_to_json(a).dump()), "t"), a);
  const Attempt empty;  // nothing measured: NaN as null and back
  const json j = fabench::accept::attempt_to_json(empty);
  CHECK(j["bw_a_to_b_gbps"].is_null());
  require_same(fabench::accept::attempt_from_json(j, "t"), empty);
}

TEST_CASE("accept: a pair result survives JSON both ways", "[accept]") {
  PairResult p;
  p.pair = {5, 2};
  p.round = 7;
  p.attempts = {full(), Attempt{}};
  const PairResult q = fabench::accept::pair_result_from_json(fabench::accept::pair_result_to_json(p), "t");
  CHECK(q.pair == p.pair);
  CHECK(q.round == 7);
  REQUIRE(q.attempts.size() == 2);
  require_same(q.attempts[0], p.attempts[0]);
  require_same(q.attempts[1], p.attempts[1]);
}

TEST_CASE("accept: a bad attempt is one line naming the origin and the field", "[accept]") {
  const json good = fabench::accept::attempt_to_json(full());
  auto broken = [&](const char* field, json value) {
    json j = good;
    if (value.is_discarded()) {
      j.erase(field);
    } else {
      j[field] = std::move(value);
    }
    return j;
  };
  using Catch::Matchers::Equals;
  CHECK_THROWS_WITH(fabench::accept::attempt_from_json(broken("status", "lost"), "rank 3"),
                    Equals("rank 3: status must be \"ok\", \"failed\" or \"timeout\" (got \"lost\")"));
  CHECK_THROWS_WITH(fabench::accept::attempt_from_json(broken("qps", 0), "rank 3"),
                    Equals("rank 3: qps must be a whole number >= 1 (got 0)"));
  CHECK_THROWS_WITH(fabench::accept::attempt_from_json(broken("bw_a_to_b_gbps", -1), "rank 3"),
                    Equals("rank 3: bw_a_to_b_gbps must be a number >= 0 or null (got -1)"));
  CHECK_THROWS_WITH(fabench::accept::attempt_from_json(broken("lat_p50_us", json::value_t::discarded), "rank 3"),
                    Equals("rank 3: missing field lat_p50_us"));
  CHECK_THROWS_WITH(fabench::accept::attempt_from_json(broken("counters_b", json{{"x", 1.5}}), "rank 3"),
                    Equals("rank 3: counters_b.\"x\" must be a whole number (got 1.5)"));
  CHECK_THROWS_WITH(fabench::accept::attempt_from_json(broken("counters_b", json{{"a\nb", "1"}}), "rank 3"),
                    Equals("rank 3: counters_b.\"a\\nb\" must be a whole number (got \"1\")"));
  CHECK_THROWS_WITH(fabench::accept::attempt_from_json(broken("lanes_a_to_b_gbps", json{1, "x"}), "rank 3"),
                    Equals("rank 3: lanes_a_to_b_gbps must hold numbers >= 0 (got \"x\")"));
  json no_lanes = good;  // reports written before lanes existed
  no_lanes.erase("lanes_a_to_b_gbps");
  CHECK(fabench::accept::attempt_from_json(no_lanes, "t").lanes_a_to_b_gbps.empty());
  CHECK_THROWS_AS(
      fabench::accept::pair_result_from_json(json{{"a", 0}, {"b", 1}, {"round", 0}, {"attempts", json::array()}}, "t"),
      AcceptError);
}

TEST_CASE("acceptbench: combine takes each measurement from the side that made it", "[accept]") {
  using fabench::acceptbench::combine;
  Attempt a;  // side A's half
  a.bw_a_to_b_gbps = 90;
  a.bw_bidir_gbps = 80;
  a.lat_p50_us = 2;
  a.lat_p99_us = 3;
  a.lat_max_us = 9;
  a.lanes_a_to_b_gbps = {45, 45};
  a.counters_a = {{"sent_pkts", 10}};
  Attempt b;  // side B's half
  b.bw_b_to_a_gbps = 85;
  b.bw_bidir_gbps = 70;
  b.counters_b = {{"sent_pkts", 20}};
  const Attempt c = combine(&a, &b, 2, 4.5, "unused");
  CHECK(c.status == Status::kOk);
  CHECK(c.qps == 2);
  CHECK(c.duration_s == 4.5);
  CHECK(c.bw_a_to_b_gbps == 90);
  CHECK(c.bw_b_to_a_gbps == 85);
  CHECK(c.bw_bidir_gbps == 150);
  CHECK(c.lat_p99_us == 3);
  CHECK(c.lanes_a_to_b_gbps == std::vector<double>{45, 45});
  CHECK(c.counters_a.at("sent_pkts") == 10);
  CHECK(c.counters_b.at("sent_pkts") == 20);

  SECTION("a timeout wins over a failure, and names its side") {
    a.status = Status::kFailed;
    a.reason = "bandwidth A->B: work completion remote access error";
    b.status = Status::kTimeout;
    b.reason = "timeout: latency: nothing from rank 0 for 8 s";
    const Attempt d = combine(&a, &b, 1, 1, "unused");
    CHECK(d.status == Status::kTimeout);
    CHECK(d.reason == "B: timeout: latency: nothing from rank 0 for 8 s");
    CHECK(d.bw_a_to_b_gbps == 90);  // measured before the failure: kept
  }
  SECTION("a missing half is a timeout with the given reason; the other half's values stay") {
    const Attempt d = combine(&a, nullptr, 1, 1, "rank 3 (h3) did not answer within 12 s");
    CHECK(d.status == Status::kTimeout);
    CHECK(d.reason == "rank 3 (h3) did not answer within 12 s");
    CHECK(d.bw_a_to_b_gbps == 90);
    CHECK(std::isnan(d.bw_bidir_gbps));
  }
}
