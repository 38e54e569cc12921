// fabench-lat --load: the spec's syntax and its errors, bit rates, names of
// the loaded benchmarks, the load's trip through Command parameters, the
// stream spec it builds and the token bucket that paces it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "fabench/base/error.hpp"
#include "fabench/harness/cli.hpp"
#include "fabench/pair/load.hpp"
#include "fabench/pair/options.hpp"
#include "fabench/pair/spec.hpp"
#include "pair_support.hpp"

using namespace fabench::pair;
using fabench::harness::UsageError;

namespace {
std::string usage_error(const std::string& text) {
  try {
    static_cast<void>(parse_load_spec(text));
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("load spec: op and size, then options in any order", "[pair][load]") {
  const LoadSpec a = parse_load_spec("write,64K");
  CHECK(a.op == Op::kWrite);
  CHECK(a.msg_bytes == 65536);
  CHECK(a.qps == 1);
  CHECK(a.rate_bps == 0);
  CHECK_FALSE(a.bidirectional);

  const LoadSpec b = parse_load_spec("write,1M,qps=2,rate=2G");
  CHECK(b.msg_bytes == 1 << 20);
  CHECK(b.qps == 2);
  CHECK(b.rate_bps == 2'000'000'000ULL);

  const LoadSpec c = parse_load_spec("read,64K,bidir");
  CHECK(c.op == Op::kRead);
  CHECK(c.bidirectional);

  const LoadSpec d = parse_load_spec("READ,4096,bidir,rate=500Mbps,qps=3");
  CHECK(d.op == Op::kRead);
  CHECK(d.msg_bytes == 4096);
  CHECK(d.rate_bps == 500'000'000ULL);
  CHECK(d.qps == 3);
  CHECK(d.bidirectional);
}

TEST_CASE("load spec: a bad spec is one line naming the bad part", "[pair][load]") {
  CHECK(usage_error("write") == "--load write: expected OP,SIZE[,qps=N][,rate=RATE][,bidir] (e.g. write,64K)");
  CHECK(usage_error("send,64K") == "--load send,64K: send: the load's operation is write or read");
  CHECK(usage_error("atomic_fadd,8") == "--load atomic_fadd,8: atomic_fadd: the load's operation is write or read");
  CHECK(usage_error("write,abc") == "--load write,abc: abc: 'abc' is not a size");
  CHECK(usage_error("write,0") == "--load write,0: 0: the load's message size must be at least 1 byte");
  CHECK(usage_error("write,64K,qps=0") == "--load write,64K,qps=0: qps=0: qps must be from 1 to 64");
  CHECK(usage_error("write,64K,qps=65") == "--load write,64K,qps=65: qps=65: qps must be from 1 to 64");
  CHECK(usage_error("write,64K,qps=x") == "--load write,64K,qps=x: qps=x: qps must be from 1 to 64");
  CHECK(usage_error("write,64K,rate=2GB") ==
        "--load write,64K,rate=2GB: rate=2GB: '2GB': the rate is in bits/s (2G = 2e9 bit/s), not bytes");
  CHECK(usage_error("write,64K,rate=fast") ==
        "--load write,64K,rate=fast: rate=fast: 'fast' is not a rate (e.g. 2G, 800M, 2.5Gbps)");
  CHECK(usage_error("write,64K,rate=0") == "--load write,64K,rate=0: rate=0: '0': the rate must be at least 1 bit/s");
  CHECK(usage_error("write,64K,depth=4") ==
        "--load write,64K,depth=4: depth=4: unknown option (qps=N, rate=RATE, bidir)");
  CHECK(usage_error("write,64K,qps=2,qps=3") ==
        "--load write,64K,qps=2,qps=3: qps=3: given twice (or bidir with a value)");
  CHECK(usage_error("write,64K,bidir=1") == "--load write,64K,bidir=1: bidir=1: given twice (or bidir with a value)");
}

TEST_CASE("bit rates: decimal prefixes, bits only", "[pair][load]") {
  CHECK(parse_bit_rate("2G") == 2'000'000'000ULL);
  CHECK(parse_bit_rate("2.5G") == 2'500'000'000ULL);
  CHECK(parse_bit_rate("800M") == 800'000'000ULL);
  CHECK(parse_bit_rate("100mbps") == 100'000'000ULL);
  CHECK(parse_bit_rate("1Gbit/s") == 1'000'000'000ULL);
  CHECK(parse_bit_rate("10k") == 10'000ULL);
  CHECK(parse_bit_rate("1T") == 1'000'000'000'000ULL);
  CHECK(parse_bit_rate("50000") == 50'000ULL);
  CHECK_THROWS_AS(parse_bit_rate(""), fabench::UserError);
  CHECK_THROWS_AS(parse_bit_rate("G"), fabench::UserError);
  CHECK_THROWS_AS(parse_bit_rate("2Q"), fabench::UserError);
  CHECK_THROWS_AS(parse_bit_rate("2GB"), fabench::UserError);
  CHECK_THROWS_AS(parse_bit_rate("2 gigabytes"), fabench::UserError);
  CHECK_THROWS_AS(parse_bit_rate("-1G"), fabench::UserError);
  CHECK_THROWS_AS(parse_bit_rate("0.1"), fabench::UserError);
  CHECK_THROWS_AS(parse_bit_rate("1e30"), fabench::UserError);

  CHECK(format_bit_rate(2'000'000'000ULL) == "2G");
  CHECK(format_bit_rate(2'500'000'000ULL) == "2500M");
  CHECK(format_bit_rate(1'000'000'000'000ULL) == "1T");
  CHECK(format_bit_rate(10'000ULL) == "10K");
  CHECK(format_bit_rate(1234ULL) == "1234");
}

TEST_CASE("loaded benchmark names: the latency name plus one load component", "[pair][load]") {
  TestSpec s = TestSpec::defaults(Kind::kLatency);
  s.msg_bytes = 64;
  s.load = parse_load_spec("write,64K");
  CHECK(s.name() == "write_lat/rc/64/load:write_65536");
  s.load = parse_load_spec("read,1M,qps=2,rate=2.5G,bidir");
  CHECK(s.name() == "write_lat/rc/64/load:read_1048576_qps2_rate2500M_bidir");
}

TEST_CASE("a load survives the trip through Command parameters, and no load adds none", "[pair][load]") {
  TestSpec s = TestSpec::defaults(Kind::kLatency);
  const auto plain = s.to_params();
  for (const auto& [k, v] : plain) CHECK(k.rfind("load_", 0) == std::string::npos);
  CHECK_FALSE(TestSpec::from_params(plain).load.has_value());

  s.load = parse_load_spec("read,256K,qps=4,rate=3G,bidir");
  const TestSpec back = TestSpec::from_params(s.to_params());
  CHECK(back == s);
  REQUIRE(back.load.has_value());
  CHECK(back.load->rate_bps == 3'000'000'000ULL);

  auto params = s.to_params();
  for (auto& [k, v] : params) {
    if (k == "load_op") v = "bogus";
  }
  CHECK_THROWS_WITH(TestSpec::from_params(params), "parameter load_op: unknown operation 'bogus'");
  params.erase(params.end() - 1);  // load_bidirectional
  for (auto& [k, v] : params) {
    if (k == "load_op") v = "write";
  }
  CHECK_THROWS_WITH(TestSpec::from_params(params), "parameter load_bidirectional is missing");
}

TEST_CASE("the load's stream spec: RC bandwidth, signalled about every 64 KiB", "[pair][load]") {
  TestSpec lat = TestSpec::defaults(Kind::kLatency);
  lat.transport = IBV_QPT_UD;
  lat.op = Op::kSend;
  lat.mtu_bytes = 1024;
  lat.sl = 3;
  lat.load = parse_load_spec("write,64K,qps=2,bidir");
  const TestSpec s = load_stream_spec(lat);
  CHECK(s.kind == Kind::kBandwidth);
  CHECK(s.transport == IBV_QPT_RC);
  CHECK(s.op == Op::kWrite);
  CHECK(s.qps == 2);
  CHECK(s.bidirectional);
  CHECK(s.tx_depth == 64);  // 4 MiB in flight per QP
  CHECK(s.cq_mod == 1);
  CHECK(s.mtu_bytes == 1024);
  CHECK(s.sl == 3);
  CHECK(validate(s).empty());
  CHECK(validate(lat).empty());
  lat.load->msg_bytes = 4096;
  CHECK(load_stream_spec(lat).tx_depth == 128);
  CHECK(load_stream_spec(lat).cq_mod == 16);
  lat.load->msg_bytes = 8;
  CHECK(load_stream_spec(lat).cq_mod == 32);  // a quarter of the 128-deep queue
  lat.load->msg_bytes = 8 << 20;
  CHECK(load_stream_spec(lat).tx_depth == 4);
  CHECK(load_stream_spec(lat).cq_mod == 1);
  CHECK(total_buffer_bytes(lat) == lat.buffer_bytes() + load_stream_spec(lat).buffer_bytes());

  TestSpec bw = TestSpec::defaults(Kind::kBandwidth);
  bw.load = LoadSpec{};
  CHECK(validate(bw) == "--load applies to latency benchmarks (fabench-lat)");
  lat.load->op = Op::kSend;
  CHECK(validate(lat) == "--load send: the load is write or read (one-sided)");
  lat.load->op = Op::kWrite;
  lat.load->qps = 0;
  CHECK(validate(lat) == "--load qps=0: must be from 1 to 64");
}

TEST_CASE("load flag: each latency spec is followed by its loaded twin", "[pair][load][cli]") {
  auto o = fabench::test::parse(Kind::kLatency, {"host", "--op", "write,read", "-s", "2,64", "--load", "write,64K"});
  check_contradictions(o);
  const auto specs = build_specs(o, Kind::kLatency);
  std::vector<std::string> names;
  for (const auto& s : specs) names.push_back(s.name());
  CHECK(names == std::vector<std::string>{"write_lat/rc/2", "write_lat/rc/2/load:write_65536", "write_lat/rc/64",
                                          "write_lat/rc/64/load:write_65536", "read_lat/rc/2",
                                          "read_lat/rc/2/load:write_65536", "read_lat/rc/64",
                                          "read_lat/rc/64/load:write_65536"});
}

TEST_CASE("load flag: usage errors", "[pair][load][cli]") {
  auto bad = fabench::test::parse(Kind::kLatency, {"host", "--load", "write,64K,rate=2GB"});
  CHECK_THROWS_AS(check_contradictions(bad), UsageError);
  auto server = fabench::test::parse(Kind::kLatency, {"--load", "write,64K"});
  CHECK_THROWS_WITH(check_contradictions(server),
                    "--load is a client option: the server builds what each client asks for");
  auto table = fabench::test::parse(Kind::kLatency, {"host", "--load", "write,64K", "--out_json"});
  CHECK_THROWS_WITH(check_contradictions(table),
                    "--load does not combine with perftest's report (--output, --out_json, -w, -y)");
  // fabench-bw has no --load.
  CHECK_THROWS(fabench::test::parse(Kind::kBandwidth, {"host", "--load", "write,64K"}));
}

TEST_CASE("token bucket: holds the rate exactly, however coarse the clock", "[pair][load]") {
  constexpr std::uint64_t kMsg = 65536;
  constexpr std::uint64_t kRate = 2'000'000'000ULL;  // 250 MB/s: one 64 KiB message per 262144 ns
  TokenBucket b(kRate, kMsg, 0);
  CHECK(b.wait_ns(0) == 0);
  CHECK(b.take(kMsg, 0));  // starts empty: the first message goes at once
  CHECK_FALSE(b.take(kMsg, 0));
  CHECK(b.wait_ns(0) == 262'145);
  CHECK_FALSE(b.take(kMsg, 262'143));
  CHECK(b.take(kMsg, 262'144));
  // A caller that asks every `step` ns for 1 s of simulated time keeps the
  // rate as long as the burst covers its step.
  for (const std::uint64_t step : {1ULL, 1000ULL, 77'777ULL, 1'000'000ULL}) {
    TokenBucket p(kRate, std::max<std::uint64_t>(kMsg, 2 * kRate / 8 * step / 1'000'000'000ULL), 0);
    std::uint64_t sent = 0;
    std::uint64_t last = 0;
    for (std::uint64_t t = 0; t < 1'000'000'000ULL; t += step) {
      while (p.take(kMsg, t)) sent += kMsg;
      last = t;
    }
    // What the rate allows by the last call, within one message either way.
    const double allowed = static_cast<double>(kRate) / 8e9 * static_cast<double>(last);
    INFO("step " << step << " ns: " << sent << " B by " << last << " ns; the rate allows " << allowed);
    CHECK(static_cast<double>(sent) >= allowed);
    CHECK(static_cast<double>(sent) <= allowed + kMsg);
  }
  // Idle time saves at most the burst: after 1 s of nothing, 2 messages at
  // once (the burst's one and the one a bucket not in debt may send), then the rate.
  TokenBucket idle(kRate, kMsg, 0);
  CHECK(idle.take(kMsg, 0));
  int at_once = 0;
  while (idle.take(kMsg, 1'000'000'000ULL)) ++at_once;
  CHECK(at_once == 2);
}
