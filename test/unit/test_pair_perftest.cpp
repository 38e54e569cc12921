// perftest compatibility without a device: every perftest 4.5 flag of the
// lat/bw tools is accepted (and lands where it should) or refused with its
// one line; --output-format perftest prints perftest's layout, compared with
// real perftest output captured in the test bed (fixtures/perftest, made by
// fixtures/perftest/capture.sh) with every number masked.
#include <CLI/CLI.hpp>
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fabench/pair/engines.hpp"
#include "fabench/pair/options.hpp"
#include "fabench/pair/perftest_report.hpp"
#include "pair_support.hpp"

using namespace fabench::pair;
using fabench::harness::UsageError;
namespace verbs = fabench::verbs;

namespace {

using fabench::test::parse;

// Parses and checks; the UsageError's line, or "" when accepted.
std::string refusal(Kind kind, std::vector<std::string> args) {
  try {
    check_contradictions(parse(kind, std::move(args)));
  } catch (const UsageError& e) {
    return e.what();
  }
  return {};
}

}  // namespace

TEST_CASE("perftest flags: every implemented flag is accepted and lands in Options", "[pair][perftest]") {
  const std::vector<std::vector<std::string>> bw_ok{
      {"--report_gbits"},
      {"-N"},
      {"--noPeak"},
      {"--output", "bandwidth"},
      {"--output=message_rate"},
      {"--out_json"},
      {"--out_json_file", "a.json"},
      {"--report-both", "-b"},
      {"-w", "100"},
      {"--limit_bw=2.5"},
      {"-y", "0.5"},
      {"--limit_msgrate", "1"},
      {"--run_infinitely"},
      {"--wait_destroy", "1"},
      {"-u", "20"},
      {"--qp-timeout=18"},
      {"-L", "32"},
      {"--hop_limit", "255"},
      {"--pkey_index", "1"},
      {"-o", "4"},
      {"--outs", "8"},
      {"-X", "1"},
      {"--vector", "0"},
      {"--use_hugepages"},
      {"--perform_warm_up"},
      {"--force-link", "Ethernet"},
      {"--force-link=IB"},
      {"--use_old_post_send"},
      {"--dont_xchg_versions"},
      {"--disable_pcie_relaxed"},
      {"--tclass", "3"},
      {"--output-format", "perftest"},
      {"--output-format=google"},
      {"-F"},
      {"--CPU-freq"},
      {"-e"},
      {"-T", "5"},
      {"-l", "4", "-t", "128", "-Q", "64"},
  };
  for (const auto& args : bw_ok) {
    INFO(args.front());
    CHECK(refusal(Kind::kBandwidth, args).empty());
  }
  const std::vector<std::vector<std::string>> lat_ok{
      {"-H"},
      {"--report-histogram"},
      {"-U"},
      {"--report-unsorted"},
      {"--output", "latency"},
      {"--out_json"},
      {"-u", "20"},
      {"-L", "2"},
      {"--pkey_index", "0"},
      {"-o", "1"},
      {"-X", "2"},
      {"--use_hugepages"},
      {"--perform_warm_up"},
      {"--tclass=7"},
      {"--output-format", "perftest"},
      {"-A", "CMP_AND_SWAP"},
      {"-I", "64"},
      {"-e", "--op", "send"},
  };
  for (const auto& args : lat_ok) {
    INFO(args.front());
    CHECK(refusal(Kind::kLatency, args).empty());
  }
  const Options bw = parse(Kind::kBandwidth, {"--report_gbits",
                                              "-N",
                                              "-w",
                                              "90.5",
                                              "-y",
                                              "2",
                                              "-u",
                                              "20",
                                              "-L",
                                              "9",
                                              "--pkey_index",
                                              "3",
                                              "-o",
                                              "4",
                                              "-X",
                                              "1",
                                              "--use_hugepages",
                                              "--mr_per_qp",
                                              "--tclass",
                                              "96",
                                              "--out_json_file",
                                              "r.json",
                                              "--perform_warm_up"});
  CHECK(bw.perftest.report_gbits);
  CHECK(bw.perftest.no_peak);
  CHECK(bw.perftest.limit_bw == 90.5);
  CHECK(bw.perftest.limit_msgrate == 2);
  CHECK(bw.perftest.side.qp_timeout == 20);
  CHECK(bw.perftest.side.hop_limit == 9);
  CHECK(bw.perftest.side.pkey_index == 3);
  CHECK(bw.perftest.side.max_rd_atomic == 4);
  CHECK(bw.perftest.side.comp_vector == 1);
  CHECK(bw.perftest.side.huge_pages);
  CHECK(bw.perftest.side.mr_per_qp);
  CHECK_FALSE(parse(Kind::kBandwidth, {}).perftest.side.mr_per_qp);
  CHECK(bw.perftest.warm_up);
  CHECK(bw.tos == 96);
  CHECK(bw.perftest.json_path() == "r.json");
  CHECK(bw.perftest.needs_rows());
  CHECK_FALSE(bw.perftest.perftest_format());
  CHECK(parse(Kind::kBandwidth, {"--output", "bandwidth"}).perftest.perftest_format());
  CHECK(parse(Kind::kLatency, {}).perftest.json_path() == "perftest_out.json");
  CHECK_FALSE(parse(Kind::kLatency, {}).perftest.needs_rows());
  // The tclass reaches the spec both ends build.
  CHECK(build_specs(parse(Kind::kBandwidth, {"--tclass", "96"}), Kind::kBandwidth).at(0).traffic_class == 96);
}

TEST_CASE("perftest flags: refused flags say why in one line", "[pair][perftest]") {
  struct Case {
    Kind kind;
    std::vector<std::string> args;
    std::string line;
  };
  const Kind L = Kind::kLatency;
  const Kind B = Kind::kBandwidth;
  const std::string aes = "encryption (AES-XTS) is not supported";
  const std::string rate = "the rate limiter is not supported yet";
  const std::vector<Case> cases{
      {L, {"-C"}, "--report-cycles: fabench reports microseconds, not CPU cycles"},
      {B, {"-f", "2"}, "--margin: fabench's -D measures the whole duration, without margins"},
      {B, {"-O"}, "--dualport: dual-port runs are not supported"},
      {B, {"--report-per-port"}, "--report-per-port: dual-port runs are not supported"},
      {L,
       {"-z"},
       "--com_rdma_cm: fabench exchanges its data over its TCP control connection; -R connects the queue pairs "
       "through rdma_cm"},
      {B,
       {"--retry_count", "3"},
       "--retry_count: fabench's -R makes one rdma_cm connection attempt per queue pair and names the failure (no "
       "retries)"},
      {B, {"--log_dci_streams", "1"}, "--log_dci_streams: DC transport is not supported"},
      {L, {"--log_active_dci_streams=1"}, "--log_active_dci_streams: DC transport is not supported"},
      {B, {"--aes_xts"}, "--aes_xts: " + aes},
      {B, {"--encrypt_on_tx"}, "--encrypt_on_tx: " + aes},
      {B, {"--sig_before"}, "--sig_before: " + aes},
      {B, {"--aes_block_size", "512"}, "--aes_block_size: " + aes},
      {B, {"--data_enc_keys_number", "1"}, "--data_enc_keys_number: " + aes},
      {L, {"--kek_path", "k"}, "--kek_path: " + aes},
      {L, {"--credentials_path", "c"}, "--credentials_path: " + aes},
      {L, {"--data_enc_key_app_path", "a"}, "--data_enc_key_app_path: " + aes},
      {B,
       {"--dlid", "3"},
       "--dlid: fabench exchanges addresses over its control connection; a fixed destination "
       "LID is not supported"},
      {B, {"--mmap", "f"}, "--mmap: buffers from an mmap'd file are not supported yet"},
      {L, {"--mmap-offset", "0"}, "--mmap-offset: buffers from an mmap'd file are not supported yet"},
      {B, {"--odp"}, "--odp: on-demand paging is not supported yet"},
      {B, {"--cpu_util"}, "--cpu_util: CPU utilization reports are not supported yet"},
      {L, {"--latency_gap", "5"}, "--latency_gap: a delay between latency iterations is not supported yet"},
      {B, {"-g"}, "--mcg: multicast is not supported"},
      {L, {"-M", "ff0e::1"}, "--MGID: multicast is not supported"},
      {B, {"--use-srq"}, "--use-srq: shared receive queues are not supported yet"},
      {L, {"--inline_recv", "64"}, "--inline_recv: inline receive is not supported yet"},
      {B, {"--recv_post_list", "4"}, "--recv_post_list: receive post lists are not supported yet"},
      {B, {"--burst_size", "8"}, "--burst_size: " + rate},
      {B, {"--typical_pkt_size", "64"}, "--typical_pkt_size: " + rate},
      {B, {"--rate_limit", "5"}, "--rate_limit: " + rate},
      {B, {"--rate_units", "g"}, "--rate_units: " + rate},
      {B, {"--rate_limit_type", "SW"}, "--rate_limit_type: " + rate},
      {B,
       {"-A", "FETCH_AND_ADD"},
       "--atomic_type: atomic bandwidth is not supported yet (fabench-lat -A measures "
       "atomic latency)"},
      {B, {"--output", "latency"}, "--output latency: fabench-bw prints bandwidth or message_rate"},
      {L, {"--output", "bandwidth"}, "--output bandwidth: fabench-lat prints latency"},
      {L, {"--output", "latency", "-H"}, "--output prints one number; -H/-U print every sample: choose one"},
      {B, {"--run_infinitely", "-n", "5"}, "--run_infinitely repeats runs of -D seconds; it contradicts -n"},
  };
  for (const auto& c : cases) {
    INFO(c.args.front());
    CHECK(refusal(c.kind, c.args) == c.line);
  }
  // Transports perftest has and fabench does not.
  CHECK_THROWS_WITH(build_specs(parse(B, {"-c", "XRC"}), B),
                    Catch::Equals("-c XRC: the XRC transport is not supported (RC, UC or UD)"));
  CHECK_THROWS_WITH(build_specs(parse(L, {"-c", "DC"}), L),
                    Catch::Equals("-c DC: the DC transport is not supported (RC, UC or UD)"));
  // A flag of the other tool family is not one of this binary's.
  CHECK_THROWS_AS(parse(B, {"-H"}), CLI::ParseError);
  CHECK_THROWS_AS(parse(L, {"--report_gbits"}), CLI::ParseError);
  CHECK_THROWS_AS(parse(B, {"--output-format", "xml"}), CLI::ParseError);
  CHECK_THROWS_AS(parse(B, {"--force-link", "RoCE"}), CLI::ParseError);
  CHECK_THROWS_AS(parse(B, {"-u", "32"}), CLI::ParseError);
}

// ------------------------------------------------- layout against perftest --

namespace {

using Run = benchmark::BenchmarkReporter::Run;

std::string read_fixture(const std::string& name) {
  std::ifstream f(std::string(FABENCH_UNIT_FIXTURES) + "/perftest/" + name);
  REQUIRE(f.good());
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// What may differ between two runs is masked: numbers (decimal, hex, -nan;
// not a percentage, which names a column) become '#', ON/OFF become '*', runs of spaces and tabs one space. What
// must not differ stays: every label, column name, unit, line and order.
std::vector<std::string> layout(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::string out;
    for (std::size_t i = 0; i < line.size();) {
      const char c = line[i];
      const bool after_word = i > 0 && (std::isalnum(static_cast<unsigned char>(line[i - 1])) || line[i - 1] == '_');
      if (line.compare(i, 4, "-nan") == 0) {
        out += '#';
        i += 4;
      } else if (std::isdigit(static_cast<unsigned char>(c)) && !after_word) {
        const std::size_t start = i;
        while (i < line.size() && (std::isalnum(static_cast<unsigned char>(line[i])) || line[i] == '.')) ++i;
        // "99.9%" names a column; it is not a value.
        out += i < line.size() && line[i] == '%' ? line.substr(start, i - start) : "#";
      } else if (c == ' ' || c == '\t') {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
        out += ' ';
      } else {
        out += c;
        ++i;
      }
    }
    for (const char* word : {" ON", " OFF"}) {
      for (auto pos = out.find(word); pos != std::string::npos; pos = out.find(word, pos + 1)) {
        const auto end = pos + std::strlen(word);
        if (end == out.size() || out[end] == ' ') out.replace(pos + 1, end - pos - 1, "*");
      }
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    lines.push_back(out);
  }
  return lines;
}

struct Scenario {
  TestSpec spec;
  std::vector<std::uint64_t> sizes;
  std::vector<std::string> args;  // perftest flags of the capture, as fabench takes them
};

fabench::Endpoint endpoint(std::uint32_t qpn, std::uint8_t last) {
  fabench::Endpoint e;
  e.qpn = qpn;
  e.psn = 0xabcdef;
  e.gid_index = 1;
  e.gid = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 10, 50, 0, last};
  e.addr = 0x55fec83c0000;
  e.rkey = 0x2c4;
  return e;
}

Run make_run(const TestSpec& spec, std::uint64_t iterations) {
  Run r;
  r.run_name.function_name = spec.name();
  r.run_type = Run::RT_Iteration;
  r.iterations = static_cast<benchmark::IterationCount>(iterations);
  r.real_accumulated_time = 2.0;
  auto& c = r.counters;
  if (spec.kind == Kind::kBandwidth) {
    c["Gbps"] = 0.45;
    c["Mmsgps"] = 0.000858;
    c["tx_Gbps"] = 0.23;
    c["rx_Gbps"] = 0.22;
  } else {
    for (const char* k : {"min_us", "max_us", "p50_us", "mean_us", "stddev_us", "p99_us", "p99.9_us"}) c[k] = 20.5;
  }
  return r;
}

// fabench's perftest output for `s`, through the reporter as fabench-lat/-bw run it.
std::string fabench_text(const Scenario& s) {
  const Options o = parse(s.spec.kind, s.args);
  std::vector<TestSpec> specs;
  for (auto size : s.sizes) {
    TestSpec t = s.spec;
    t.msg_bytes = size;
    specs.push_back(t);
  }
  auto banner = [](const TestSpec& spec) {
    PerftestBanner b;
    b.spec = spec;
    b.device = "rxe0";
    b.link_layer = "Ethernet";
    b.gid_index = 1;
    b.mtu_bytes = 4096;
    b.outs = 16;
    for (std::uint32_t q = 0; q < spec.qps; ++q) b.local.push_back(endpoint(0x11 + q, 1));
    for (std::uint32_t q = 0; q < spec.qps; ++q) b.remote.push_back(endpoint(0x11 + q, 2));
    return b;
  };
  PerftestReporter reporter(o.perftest, specs, o.duration_s > 0, banner, nullptr, nullptr);
  std::ostringstream out;
  std::ostringstream err;
  reporter.SetOutputStream(&out);
  reporter.SetErrorStream(&err);
  for (const auto& spec : specs) reporter.ReportRuns({make_run(spec, 1000)});
  reporter.Finalize();
  CHECK(err.str().empty());
  return out.str();
}

TestSpec spec_of(Kind kind, Op op, std::uint64_t bytes) {
  TestSpec s = TestSpec::defaults(kind);
  s.op = op;
  s.msg_bytes = bytes;
  return s;
}

}  // namespace

TEST_CASE("perftest layout: fabench prints what perftest 4.5 prints, numbers aside", "[pair][perftest]") {
  const Kind L = Kind::kLatency;
  const Kind B = Kind::kBandwidth;
  std::vector<std::uint64_t> all;
  for (std::uint64_t s = 2; s <= (8U << 20); s *= 2) all.push_back(s);
  TestSpec qps2 = spec_of(B, Op::kWrite, 4096);
  qps2.qps = 2;
  TestSpec bidir = spec_of(B, Op::kSend, 65536);
  bidir.bidirectional = true;
  const std::vector<std::pair<std::string, Scenario>> cases{
      {"write_lat.txt", {spec_of(L, Op::kWrite, 2), {2}, {"--output-format", "perftest"}}},
      {"read_lat.txt", {spec_of(L, Op::kRead, 2), {2}, {"--output-format", "perftest"}}},
      {"send_lat.txt", {spec_of(L, Op::kSend, 2), {2}, {"--output-format", "perftest"}}},
      {"atomic_lat.txt", {spec_of(L, Op::kFetchAdd, 8), {8}, {"--output-format", "perftest"}}},
      {"atomic_lat_cas.txt", {spec_of(L, Op::kCompSwap, 8), {8}, {"--output-format", "perftest"}}},
      {"write_lat_sizes.txt", {spec_of(L, Op::kWrite, 2), all, {"--output-format", "perftest"}}},
      {"write_lat_duration.txt", {spec_of(L, Op::kWrite, 64), {64}, {"--output-format", "perftest", "-D", "2"}}},
      {"write_lat_output.txt", {spec_of(L, Op::kWrite, 64), {64}, {"--output=latency"}}},
      {"write_bw.txt", {spec_of(B, Op::kWrite, 65536), {65536}, {"--output-format", "perftest"}}},
      {"write_bw_gbits.txt",
       {spec_of(B, Op::kWrite, 65536), {65536}, {"--output-format", "perftest", "--report_gbits"}}},
      {"write_bw_nopeak.txt", {spec_of(B, Op::kWrite, 4096), {4096}, {"--output-format", "perftest", "-N"}}},
      {"write_bw_duration.txt", {spec_of(B, Op::kWrite, 65536), {65536}, {"--output-format", "perftest", "-D", "2"}}},
      {"write_bw_limit.txt", {spec_of(B, Op::kWrite, 65536), {65536}, {"--output-format", "perftest", "-w", "1"}}},
      {"write_bw_output.txt", {spec_of(B, Op::kWrite, 65536), {65536}, {"--output=bandwidth"}}},
      {"write_bw_msgrate.txt", {spec_of(B, Op::kWrite, 64), {64}, {"--output=message_rate"}}},
      {"write_bw_sizes.txt", {spec_of(B, Op::kWrite, 2), all, {"--output-format", "perftest"}}},
      {"write_bw_qps.txt", {qps2, {4096}, {"--output-format", "perftest"}}},
      {"read_bw.txt", {spec_of(B, Op::kRead, 65536), {65536}, {"--output-format", "perftest"}}},
      {"send_bw_bidir.txt", {bidir, {65536}, {"--output-format", "perftest", "-b"}}},
      {"send_bw_both.txt", {bidir, {65536}, {"--output-format", "perftest", "-b", "--report-both"}}},
  };
  for (const auto& [fixture, scenario] : cases) {
    INFO(fixture);
    const auto want = layout(read_fixture(fixture));
    const auto got = layout(fabench_text(scenario));
    for (std::size_t i = 0; i < std::max(want.size(), got.size()); ++i) {
      INFO("line " << i + 1);
      CHECK((i < got.size() ? got[i] : "<missing>") == (i < want.size() ? want[i] : "<missing>"));
    }
  }
}

TEST_CASE("perftest layout: the normalizer masks values only", "[pair][perftest]") {
  CHECK(layout(" 65536      1000             59.19              44.28  \t\t   0.000708") ==
        std::vector<std::string>{" # # # # #"});
  CHECK(layout(" Device         : rxe0\t PCIe relax order: ON") ==
        std::vector<std::string>{" Device : rxe0 PCIe relax order: *"});
  CHECK(layout(" local address: LID 0000 QPN 0x001a") == std::vector<std::string>{" local address: LID # QPN #"});
  // A unit or a column name that differs is not masked away.
  CHECK(layout(" BW peak[MB/sec]") != layout(" BW peak[Gb/sec]"));
  CHECK(layout(" 99% percentile[usec]") != layout(" 99.9% percentile[usec]"));
}

TEST_CASE("perftest JSON: valid JSON with perftest's keys in perftest's order", "[pair][perftest]") {
  // perftest 4.5 writes its keys unquoted (not JSON); fabench writes the
  // same keys, quoted, so `grep BW_average | awk '{print $2}'` and a JSON
  // parser both work.
  auto keys_of = [](const std::string& text) {
    std::vector<std::string> keys;
    std::istringstream in(text);
    static const std::regex key(R"re(^\s*"?([A-Za-z_][A-Za-z0-9_.]*)"?\s*:)re");
    for (std::string line; std::getline(in, line);) {
      std::smatch m;
      if (std::regex_search(line, m, key)) keys.push_back(m[1]);
    }
    return keys;
  };
  PerftestBanner b;
  b.spec = spec_of(Kind::kLatency, Op::kWrite, 64);
  b.device = "rxe0";
  b.link_layer = "Ethernet";
  b.gid_index = 1;
  b.mtu_bytes = 4096;
  PerftestLatRow row{64, 500, 21.32, 16088.63, 3969.16, 3092.35, 2802.49, 12105.81, 16088.63};
  const std::string lat = perftest_json(b, perftest_json_lat(row, ""), {perftest_json_lat(row, "")});
  auto want = keys_of(read_fixture("write_lat_json.json"));
  auto got = keys_of(lat);
  // fabench's addition: every row, after perftest's keys.
  REQUIRE(got.size() > want.size());
  CHECK(std::vector<std::string>(got.begin(), got.begin() + static_cast<std::ptrdiff_t>(want.size())) == want);
  const auto doc = nlohmann::json::parse(lat);
  CHECK(doc["results"]["t_typical"].get<double>() == 3969.16);
  CHECK(doc["results"]["percentile_99.9"].get<double>() == 16088.63);
  CHECK(doc["all_results"].size() == 1);

  // Bandwidth: the capture is the server's file (no TX_depth); its results match.
  b.spec = spec_of(Kind::kBandwidth, Op::kWrite, 65536);
  PerftestBwRow bw{65536, 1000, 60.43, 48.12, 0.000770};
  const std::string bw_text = perftest_json(b, perftest_json_bw(bw, ""), {perftest_json_bw(bw, "")});
  const auto bw_doc = nlohmann::json::parse(bw_text);
  CHECK(bw_doc["test_info"]["test"] == "RDMA_Write_BW_Test");
  CHECK(bw_doc["results"]["BW_average"].get<double>() == 48.12);
  want = keys_of(read_fixture("write_bw_json.json"));
  got = keys_of(bw_text);
  auto results_of = [](const std::vector<std::string>& k) {
    const auto at = std::find(k.begin(), k.end(), "results");
    return std::vector<std::string>(at, std::find(at, k.end(), "MsgRate") + 1);
  };
  CHECK(results_of(got) == results_of(want));
}

TEST_CASE("perftest flags: --source_ip (a client's) and --ipv6 are taken", "[pair][perftest]") {
  const Options client = parse(Kind::kLatency, {"--source_ip", "10.50.0.1", "--ipv6", "10.50.0.2"});
  CHECK(client.source_ip == "10.50.0.1");
  CHECK(client.dev.ipv6_gid);
  CHECK(client.dev.context_options().ipv6_gid);
  CHECK_NOTHROW(check_contradictions(client));
  CHECK_NOTHROW(check_contradictions(parse(Kind::kBandwidth, {"--source_ip", "fe80::1", "host"})));
  CHECK_FALSE(parse(Kind::kBandwidth, {}).dev.ipv6_gid);
  CHECK_THROWS_WITH(check_contradictions(parse(Kind::kBandwidth, {"--source_ip", "10.50.0.1"})),
                    "--source_ip is a client option (a server listens: --bind ADDRESS)");
  CHECK_THROWS_WITH(check_contradictions(parse(Kind::kBandwidth, {"--source_ip", "eth0", "host"})),
                    "--source_ip eth0: not an IPv4 or IPv6 address");
}

TEST_CASE("perftest flags: --reversed makes the server the sender of bandwidth specs", "[pair][perftest]") {
  const Options client = parse(Kind::kBandwidth, {"--reversed", "--op", "write,send,read", "10.50.0.2"});
  CHECK(client.perftest.reversed);
  CHECK_NOTHROW(check_contradictions(client));
  const auto specs = build_specs(client, Kind::kBandwidth);
  REQUIRE(specs.size() == 3);
  for (const auto& s : specs) {
    CHECK(s.reversed);
    CHECK(s.name().ends_with("/reversed"));
    CHECK(validate(s).empty());
    // The follower posts the operation; the leader only receives (send) or waits.
    CHECK(initiates(s, Role::kFollower));
    CHECK_FALSE(initiates(s, Role::kLeader));
    CHECK(TestSpec::from_params(s.to_params()) == s);
  }
  CHECK_FALSE(build_specs(parse(Kind::kBandwidth, {"10.50.0.2"}), Kind::kBandwidth).front().reversed);
  CHECK_THROWS_WITH(check_contradictions(parse(Kind::kBandwidth, {"--reversed", "-b", "10.50.0.2"})),
                    "--reversed and -b contradict each other: -b already sends both ways");
  // Latency has no direction to reverse: fabench-lat does not take the flag.
  CHECK_THROWS(parse(Kind::kLatency, {"--reversed"}));
  TestSpec lat = TestSpec::defaults(Kind::kLatency);
  lat.reversed = true;
  CHECK(validate(lat) == "--reversed applies to bandwidth only");
}
