// The pair's counter selection (--counters, -W) and perftest's -W lines.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "fabench/pair/options.hpp"
#include "fabench/pair/perftest_report.hpp"
#include "pair_support.hpp"

using namespace fabench::pair;
using fabench::harness::UsageError;

namespace {

using fabench::test::parse;

}  // namespace

TEST_CASE("counter_selection: the default set unless told otherwise", "[pair][counters]") {
  const CounterSelection def = counter_selection(parse(Kind::kBandwidth, {}));
  CHECK(def.enabled);
  CHECK_FALSE(def.all);
  CHECK(def.names.empty());
  CHECK(def.keeps("port_xmit_data"));
  CHECK(def.keeps("sent_pkts"));
  CHECK(def.keeps("hw_counters/out_of_sequence"));
  CHECK(def.keeps("np_cnp_sent"));
  CHECK_FALSE(def.keeps("rdma_sends"));

  const CounterSelection none = counter_selection(parse(Kind::kLatency, {"--counters", "none"}));
  CHECK_FALSE(none.enabled);
  CHECK_FALSE(none.keeps("port_xmit_data"));

  const CounterSelection all = counter_selection(parse(Kind::kLatency, {"--counters", "all"}));
  CHECK(all.keeps("rdma_sends"));
  CHECK(all.keeps("anything"));

  const CounterSelection list = counter_selection(parse(Kind::kBandwidth, {"--counters", "rdma_sends, sent_pkts"}));
  CHECK(list.names == std::vector<std::string>{"rdma_sends", "sent_pkts"});
  CHECK(list.keeps("rdma_sends"));
  CHECK_FALSE(list.keeps("rcvd_pkts"));
}

TEST_CASE("counter_selection: -W as perftest lists counters", "[pair][counters]") {
  for (const Kind kind : {Kind::kLatency, Kind::kBandwidth}) {
    const Options o = parse(kind, {"-W", "counters/port_xmit_data,hw_counters/out_of_buffer"});
    CHECK(o.perftest.report_counters == "counters/port_xmit_data,hw_counters/out_of_buffer");
    CHECK_NOTHROW(check_contradictions(o));
    const CounterSelection sel = counter_selection(o);
    CHECK(sel.enabled);
    CHECK(sel.keeps("port_xmit_data"));
    CHECK(sel.keeps("out_of_buffer"));
    CHECK(sel.keeps("hw_counters/out_of_buffer"));
    CHECK_FALSE(sel.keeps("port_rcv_data"));
  }
  CHECK(parse(Kind::kBandwidth, {"--report-counters=sent_pkts"}).perftest.report_counters == "sent_pkts");
  // -W with --counters default is the same thing said twice; with anything else a contradiction.
  CHECK_NOTHROW(check_contradictions(parse(Kind::kBandwidth, {"-W", "sent_pkts", "--counters", "default"})));
  CHECK_THROWS_WITH(check_contradictions(parse(Kind::kBandwidth, {"-W", "sent_pkts", "--counters", "all"})),
                    Catch::Equals("-W sent_pkts and --counters all both select counters: give one"));
  CHECK_THROWS_AS(check_contradictions(parse(Kind::kBandwidth, {"-W", ","})), UsageError);
  CHECK_THROWS_AS(check_contradictions(parse(Kind::kBandwidth, {"--counters", ","})), UsageError);
}

TEST_CASE("perftest_counters: one tab-indented NAME=DELTA line each, then an empty line", "[pair][counters]") {
  CHECK(perftest_counters({{"counters/port_xmit_data", 1234}, {"hw_counters/out_of_buffer", 0}, {"x", -2}}) ==
        "\tcounters/port_xmit_data=1234\n\thw_counters/out_of_buffer=0\n\tx=-2\n\n");
  CHECK(perftest_counters({}) == "\n");
}
