// The command line of fabench-lat/-bw without a device: flags into Options,
// contradictions refused with one line, lists expanded into TestSpecs.
#include <CLI/CLI.hpp>
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "fabench/pair/options.hpp"
#include "pair_support.hpp"

using namespace fabench::pair;
using fabench::harness::UsageError;

namespace {

using fabench::test::parse;

std::vector<std::string> names(const std::vector<TestSpec>& specs) {
  std::vector<std::string> out;
  for (const auto& s : specs) out.push_back(s.name());
  return out;
}

}  // namespace

TEST_CASE("pair flags: the device flags and the pair's own", "[pair][cli]") {
  const Options o = parse(Kind::kBandwidth, {"-d", "rxe0", "-x", "1", "-q", "4", "-b", "--timeout", "5", "10.0.0.2"});
  CHECK(o.host == "10.0.0.2");
  CHECK(o.dev.device == "rxe0");
  CHECK(o.dev.gid_index == 1);
  CHECK(o.dev.timeout() == std::chrono::seconds(5));
  CHECK(o.qps == 4);
  CHECK(o.bidir);
  CHECK_FALSE(o.serves());
  CHECK(parse(Kind::kLatency, {}).serves());
  CHECK_FALSE(parse(Kind::kLatency, {"--loopback"}).serves());
  // Bandwidth-only flags do not exist in fabench-lat.
  CHECK_THROWS_AS(parse(Kind::kLatency, {"-q", "2"}), CLI::ParseError);
  // --qps is the one spelling (docs/cli.md); perftest's --qp and --post_list stay.
  CHECK(parse(Kind::kBandwidth, {"--qps", "3"}).qps == 3);
  CHECK(parse(Kind::kBandwidth, {"--qp", "5"}).qps == 5);
  CHECK(parse(Kind::kBandwidth, {"--post-list", "4"}).post_list == 4);
  CHECK(parse(Kind::kBandwidth, {"--post_list", "8"}).post_list == 8);
}

TEST_CASE("pair flags: contradictions are one line each", "[pair][cli]") {
  CHECK_THROWS_WITH(check_contradictions(parse(Kind::kLatency, {"--loopback", "10.0.0.1"})),
                    Catch::Contains("--loopback runs both ends here"));
  CHECK_THROWS_WITH(check_contradictions(parse(Kind::kLatency, {"-n", "10", "-D", "1"})),
                    Catch::Contains("contradict"));
  CHECK_THROWS_WITH(check_contradictions(parse(Kind::kLatency, {"--peer-device", "rxe1"})),
                    Catch::Contains("--peer-device needs --loopback"));
  CHECK_THROWS_WITH(check_contradictions(parse(Kind::kBandwidth, {"-m", "3000"})),
                    Catch::Equals("-m 3000: MTU must be 256, 512, 1024, 2048 or 4096"));
  CHECK_THROWS_WITH(check_contradictions(parse(Kind::kLatency, {"-R", "--loopback"})),
                    Catch::Equals("-R with --loopback: rdma_cm resolves the server's address over the fabric; run a "
                                  "server and a client instead"));
  CHECK_THROWS_WITH(check_contradictions(parse(Kind::kLatency, {"-R", "--load", "write,64K", "10.0.0.1"})),
                    Catch::Equals("--load with -R: the load's queue pairs connect without rdma_cm; drop one of them"));
  CHECK_NOTHROW(check_contradictions(parse(Kind::kBandwidth, {"-m", "1024", "--loopback"})));
}

TEST_CASE("pair flags: -R makes rdma_cm specs on a client, and a server accepts it", "[pair][cli]") {
  for (const Kind kind : {Kind::kLatency, Kind::kBandwidth}) {
    const auto client = parse(kind, {"-R", "-c", "RC,UC,UD", "--op", "send", "10.0.0.1"});
    CHECK_NOTHROW(check_contradictions(client));
    const auto specs = build_specs(client, kind);
    REQUIRE(specs.size() == 3);
    for (const auto& s : specs) {
      CHECK(s.rdma_cm);
      CHECK(s.name().ends_with("/rdma_cm"));
    }
    // A server serves whatever each client asks: -R there changes nothing.
    const auto server = parse(kind, {"-R"});
    CHECK_NOTHROW(check_contradictions(server));
    CHECK_FALSE(build_specs(server, kind).front().rdma_cm);
  }
  CHECK_FALSE(build_specs(parse(Kind::kLatency, {"10.0.0.1"}), Kind::kLatency).front().rdma_cm);
}

TEST_CASE("pair specs: lists expand, impossible combinations in a list are skipped", "[pair][cli]") {
  CHECK(names(build_specs(parse(Kind::kLatency, {"--loopback"}), Kind::kLatency)) ==
        std::vector<std::string>{"write_lat/rc/2"});
  CHECK(names(build_specs(parse(Kind::kBandwidth, {"--loopback"}), Kind::kBandwidth)) ==
        std::vector<std::string>{"write_bw/rc/65536"});
  CHECK(names(build_specs(parse(Kind::kLatency, {"--op", "write,read", "-c", "RC,UD", "-s", "64"}), Kind::kLatency)) ==
        std::vector<std::string>{"write_lat/rc/64", "read_lat/rc/64"});
  CHECK(names(build_specs(parse(Kind::kLatency, {"-A", "FETCH_AND_ADD", "-s", "64,128"}), Kind::kLatency)) ==
        std::vector<std::string>{"atomic_fadd_lat/rc/8"});
  CHECK(build_specs(parse(Kind::kLatency, {"-a"}), Kind::kLatency).size() == 23);
}

TEST_CASE("pair specs: a single impossible combination is an error", "[pair][cli]") {
  CHECK_THROWS_WITH(build_specs(parse(Kind::kLatency, {"--op", "read", "-c", "UD"}), Kind::kLatency),
                    Catch::Contains("read needs RC"));
  CHECK_THROWS_WITH(build_specs(parse(Kind::kLatency, {"-a", "-s", "64"}), Kind::kLatency),
                    Catch::Contains("contradict"));
  CHECK_THROWS_WITH(build_specs(parse(Kind::kBandwidth, {"--op", "atomic_fadd"}), Kind::kBandwidth),
                    Catch::Contains("fabench-lat"));
  CHECK_THROWS_WITH(build_specs(parse(Kind::kLatency, {"--op", "teleport"}), Kind::kLatency),
                    Catch::Contains("unknown operation"));
  // -A picks the operation: with --op as well, one of them would be ignored.
  CHECK_THROWS_WITH(build_specs(parse(Kind::kLatency, {"-A", "FETCH_AND_ADD", "--op", "read"}), Kind::kLatency),
                    "-A FETCH_AND_ADD and --op read contradict each other: -A picks the atomic operation");
  CHECK_THROWS_WITH(build_specs(parse(Kind::kLatency, {"-s", "2,,4"}), Kind::kLatency),
                    "-s 2,,4: an empty size in the list");
  CHECK_THROWS_WITH(build_specs(parse(Kind::kLatency, {"-c", "TCP"}), Kind::kLatency),
                    Catch::Contains("unknown transport"));
  // perftest's other transports are named as such (test_pair_perftest.cpp).
  CHECK_THROWS_WITH(build_specs(parse(Kind::kLatency, {"-c", "XRC"}), Kind::kLatency),
                    Catch::Contains("XRC transport is not supported"));
  CHECK_THROWS_WITH(build_specs(parse(Kind::kBandwidth, {"-t", "16", "-Q", "200"}), Kind::kBandwidth),
                    Catch::Contains("-Q 200 exceeds -t 16"));
}

TEST_CASE("pair specs: default CQ moderation shrinks to the send queue", "[pair][cli]") {
  const auto deep = build_specs(parse(Kind::kBandwidth, {}), Kind::kBandwidth);
  CHECK(deep.at(0).cq_mod == 100);
  const auto shallow = build_specs(parse(Kind::kBandwidth, {"-t", "16", "-l", "4"}), Kind::kBandwidth);
  CHECK(shallow.at(0).cq_mod == 13);  // 16 - 4 + 1: a full window still holds a signaled WR
  CHECK(validate(shallow.at(0)).empty());
}

TEST_CASE("pair flags: UD and UC send latency with -n take perftest's receive depth", "[pair][cli]") {
  const auto rx_depths = [](Kind kind, std::vector<std::string> args) {
    args.insert(args.end(), {"--op", "send", "-c", "RC,UC,UD", "10.0.0.2"});
    std::vector<std::uint32_t> out;
    for (const auto& s : build_specs(parse(kind, args), kind)) out.push_back(s.rx_depth);
    return out;
  };
  // -r left at 512 (or given as 512: perftest cannot tell them apart either): min(-n, 16000) on UC and UD.
  CHECK(rx_depths(Kind::kLatency, {"-n", "2000"}) == std::vector<std::uint32_t>{512, 2000, 2000});
  CHECK(rx_depths(Kind::kLatency, {"-n", "2000", "-r", "512"}) == std::vector<std::uint32_t>{512, 2000, 2000});
  CHECK(rx_depths(Kind::kLatency, {"-n", "100000"}) == std::vector<std::uint32_t>{512, 16000, 16000});
  CHECK(rx_depths(Kind::kLatency, {"-n", "10"}) == std::vector<std::uint32_t>{512, 10, 10});
  // Another -r, no -n (Google Benchmark's counts), or bandwidth: -r as given.
  CHECK(rx_depths(Kind::kLatency, {"-n", "2000", "-r", "64"}) == std::vector<std::uint32_t>{64, 64, 64});
  CHECK(rx_depths(Kind::kLatency, {}) == std::vector<std::uint32_t>{512, 512, 512});
  CHECK(rx_depths(Kind::kBandwidth, {"-n", "2000"}) == std::vector<std::uint32_t>{512, 512, 512});
  // Not a send: the depth is not used, and stays.
  const auto writes = build_specs(parse(Kind::kLatency, {"-n", "2000", "-c", "UC", "10.0.0.2"}), Kind::kLatency);
  REQUIRE(writes.size() == 1);
  CHECK(writes[0].rx_depth == 512);
}
