// TestSpec naming, wire parameters, validation and buffer layout.
#include <catch2/catch.hpp>

#include <algorithm>
#include <stdexcept>

#include "fabench/pair/spec.hpp"

using namespace fabench::pair;

TEST_CASE("benchmark names show operation, kind, transport, size and non-default options", "[pair][spec]") {
  TestSpec lat = TestSpec::defaults(Kind::kLatency);
  lat.msg_bytes = 64;
  CHECK(lat.name() == "write_lat/rc/64");
  lat.op = Op::kSend;
  lat.transport = IBV_QPT_UD;
  CHECK(lat.name() == "send_lat/ud/64");

  TestSpec bw = TestSpec::defaults(Kind::kBandwidth);
  CHECK(bw.name() == "write_bw/rc/65536");
  bw.qps = 4;
  bw.post_list = 8;
  bw.cq_mod = 16;
  bw.bidirectional = true;
  CHECK(bw.name() == "write_bibw/rc/65536/qps:4/post_list:8/cq_mod:16");
  bw.events = true;
  CHECK(bw.name() == "write_bibw/rc/65536/qps:4/post_list:8/cq_mod:16/events");
}

TEST_CASE("a spec survives the trip through Command parameters", "[pair][spec]") {
  TestSpec s = TestSpec::defaults(Kind::kBandwidth);
  s.op = Op::kRead;
  s.msg_bytes = 1 << 20;
  s.qps = 3;
  s.tx_depth = 64;
  s.rx_depth = 100;
  s.post_list = 4;
  s.cq_mod = 8;
  s.inline_bytes = 0;
  s.bidirectional = true;
  s.events = true;
  s.mtu_bytes = 1024;
  s.sl = 3;
  s.traffic_class = 96;
  const TestSpec back = TestSpec::from_params(s.to_params());
  CHECK(back == s);
  // rdma_cm travels only when set, so a follower that knows none sees a plain spec.
  const auto has_cm = [](const auto& params) {
    return std::any_of(params.begin(), params.end(), [](const auto& kv) { return kv.first == "rdma_cm"; });
  };
  CHECK_FALSE(has_cm(s.to_params()));
  s.rdma_cm = true;
  CHECK(has_cm(s.to_params()));
  CHECK(TestSpec::from_params(s.to_params()) == s);
  CHECK_FALSE(TestSpec::from_params(TestSpec::defaults(Kind::kLatency).to_params()).rdma_cm);
}

TEST_CASE("malformed parameters are rejected with the parameter named", "[pair][spec]") {
  auto params = TestSpec::defaults(Kind::kLatency).to_params();
  for (auto& [k, v] : params) {
    if (k == "msg_bytes") v = "12x";
  }
  CHECK_THROWS_WITH(TestSpec::from_params(params), Catch::Contains("msg_bytes") && Catch::Contains("12x"));
  params.erase(params.begin());
  CHECK_THROWS_WITH(TestSpec::from_params(params), Catch::Contains("kind") && Catch::Contains("missing"));
  auto bad_op = TestSpec::defaults(Kind::kLatency).to_params();
  for (auto& [k, v] : bad_op) {
    if (k == "op") v = "teleport";
  }
  CHECK_THROWS_WITH(TestSpec::from_params(bad_op), Catch::Contains("teleport"));
}

TEST_CASE("validate rejects combinations the verbs cannot do", "[pair][spec]") {
  TestSpec s = TestSpec::defaults(Kind::kLatency);
  CHECK(validate(s).empty());
  s.op = Op::kRead;
  s.transport = IBV_QPT_UC;
  CHECK_THAT(validate(s), Catch::Contains("read needs RC"));
  s.op = Op::kWrite;
  s.transport = IBV_QPT_UD;
  CHECK_THAT(validate(s), Catch::Contains("UD has no RDMA write"));
  s = TestSpec::defaults(Kind::kLatency);
  s.op = Op::kFetchAdd;
  s.msg_bytes = 16;
  CHECK_THAT(validate(s), Catch::Contains("exactly 8 bytes"));
  s.msg_bytes = 8;
  CHECK(validate(s).empty());
  s.transport = IBV_QPT_UC;
  CHECK_THAT(validate(s), Catch::Contains("needs RC"));
  s = TestSpec::defaults(Kind::kLatency);
  s.qps = 2;
  CHECK_THAT(validate(s), Catch::Contains("one queue pair"));
  s = TestSpec::defaults(Kind::kLatency);
  s.events = true;
  CHECK_THAT(validate(s), Catch::Contains("polls memory"));
  // fabench-lat has no -b flag: only a leader's spec can carry this contradiction.
  s = TestSpec::defaults(Kind::kLatency);
  s.bidirectional = true;
  CHECK(validate(s) == "-b (bidirectional) applies to bandwidth only");
}

TEST_CASE("validate refuses buffers whose size wraps around 2^64", "[pair][spec]") {
  // A leader's spec reaches a server without the CLI's -q limit, and the server
  // checks buffer_bytes() against --max-mem: 4 GiB + 4 KiB regions times
  // 4294963201 queue pairs would wrap to just under 4 GiB and pass.
  TestSpec s = TestSpec::defaults(Kind::kBandwidth);
  s.msg_bytes = 1ULL << 31;
  REQUIRE(s.region_bytes() == (1ULL << 32) + 4096);
  s.qps = 4294963200U;  // the most whose buffers fit in 64 bits
  CHECK(validate(s).empty());
  CHECK(s.buffer_bytes() / s.qps == s.region_bytes());
  s.qps = 4294963201U;
  CHECK(validate(s) == "-q 4294963201 queue pairs of 4294971392 B exceed 2^64 bytes of buffers");
}

TEST_CASE("validate keeps a signaled WR inside every send-queue window", "[pair][spec]") {
  TestSpec s = TestSpec::defaults(Kind::kBandwidth);  // -t 128 -Q 100 -l 1
  CHECK(validate(s).empty());
  s.post_list = 29;  // 100 + 29 - 1 = 128: fits exactly
  CHECK(validate(s).empty());
  s.post_list = 30;
  CHECK_THAT(validate(s), Catch::Contains("needs -t >= 129"));
  s.post_list = 1;
  s.cq_mod = 129;
  CHECK_THAT(validate(s), Catch::Contains("exceeds -t 128"));
}

TEST_CASE("buffer layout: tx slot, rx slot (with the UD GRH), atomics, page-rounded", "[pair][spec]") {
  TestSpec s = TestSpec::defaults(Kind::kLatency);
  s.msg_bytes = 2;
  CHECK(s.slot_bytes() == 64);
  CHECK(s.region_bytes() == 4096);
  s.msg_bytes = 4096;
  CHECK(s.slot_bytes() == 4096);
  CHECK(s.region_bytes() == 3 * 4096);  // 2 slots + 64 B atomics, rounded to pages
  s.op = Op::kSend;
  s.transport = IBV_QPT_UD;
  CHECK(s.slot_bytes() == 4096 + 64);  // 4096 + 40 B GRH rounded to 64
  s = TestSpec::defaults(Kind::kBandwidth);
  s.qps = 3;
  CHECK(s.buffer_bytes() == 3 * s.region_bytes());
}

TEST_CASE("remote access is exactly what the operation needs", "[pair][spec]") {
  TestSpec s = TestSpec::defaults(Kind::kLatency);
  CHECK(s.remote_access() == IBV_ACCESS_REMOTE_WRITE);
  s.op = Op::kRead;
  CHECK(s.remote_access() == IBV_ACCESS_REMOTE_READ);
  s.op = Op::kCompSwap;
  CHECK(s.remote_access() == IBV_ACCESS_REMOTE_ATOMIC);
  s.op = Op::kSend;
  CHECK(s.remote_access() == 0);
}

TEST_CASE("operation and transport names parse both ways", "[pair][spec]") {
  for (Op op : {Op::kWrite, Op::kSend, Op::kRead, Op::kFetchAdd, Op::kCompSwap}) {
    CHECK(parse_op(op_name(op)) == op);
  }
  CHECK(parse_op("FETCH_ADD") == Op::kFetchAdd);
  CHECK_FALSE(parse_op("teleport").has_value());
  CHECK(parse_transport("RC") == IBV_QPT_RC);
  CHECK(parse_transport("ud") == IBV_QPT_UD);
  CHECK_FALSE(parse_transport("xrc").has_value());
  CHECK(reports_half_rtt(Op::kWrite));
  CHECK(reports_half_rtt(Op::kSend));
  CHECK_FALSE(reports_half_rtt(Op::kRead));
  CHECK_FALSE(reports_half_rtt(Op::kFetchAdd));
}
