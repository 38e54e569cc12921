// lib/congest: roles, rings, congestor flows, CIF arithmetic and attribution.
#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "fabench/base/error.hpp"
#include "fabench/congest/cif.hpp"
#include "fabench/congest/flows.hpp"
#include "fabench/congest/roles.hpp"

namespace cg = fabench::congest;
using fabench::UserError;
using Catch::Matchers::Contains;

TEST_CASE("congest: rank lists parse to ascending ranks, bad ones are named", "[congest]") {
  CHECK(cg::parse_rank_list("0,3-5,9", 10) == std::vector<std::uint32_t>{0, 3, 4, 5, 9});
  CHECK(cg::parse_rank_list("7,1", 8) == std::vector<std::uint32_t>{1, 7});
  CHECK_THROWS_WITH(cg::parse_rank_list("0,10", 10), Contains("rank 10 is outside 0..9"));
  CHECK_THROWS_WITH(cg::parse_rank_list("1,1", 4), Contains("rank 1 appears twice"));
  CHECK_THROWS_WITH(cg::parse_rank_list("2-4,3", 8), Contains("rank 3 appears twice"));
  CHECK_THROWS_WITH(cg::parse_rank_list("5-3", 8), Contains("runs backwards"));
  CHECK_THROWS_WITH(cg::parse_rank_list("a", 8), Contains("\"a\" is not a rank"));
  CHECK_THROWS_WITH(cg::parse_rank_list("1,", 8), Contains("\"\" is not a rank"));
  CHECK(cg::rank_ranges(std::vector<std::uint32_t>{1, 2, 3, 5, 7, 8, 9}) == "1-3,5,7-9");
}

TEST_CASE("congest: roles by seeded shuffle are reproducible and the split is exact", "[congest]") {
  const cg::Roles a = cg::choose_roles(10, 0.8, 42);
  const cg::Roles b = cg::choose_roles(10, 0.8, 42);
  CHECK(a.congestors == b.congestors);
  CHECK(a.congestors.size() == 8);
  CHECK(a.victims.size() == 2);
  std::set<std::uint32_t> all(a.victims.begin(), a.victims.end());
  all.insert(a.congestors.begin(), a.congestors.end());
  CHECK(all.size() == 10);
  CHECK(std::is_sorted(a.victims.begin(), a.victims.end()));
  // Another seed draws another split (for some seed among a few: the draw is not constant).
  bool differs = false;
  for (std::uint64_t s = 1; s < 8 && !differs; ++s) differs = cg::choose_roles(10, 0.8, s).victims != a.victims;
  CHECK(differs);
  for (const auto v : a.victims) CHECK(a.is_victim(v));
  for (const auto c : a.congestors) CHECK_FALSE(a.is_victim(c));
  CHECK(cg::describe(cg::named_roles(8, std::vector<std::uint32_t>{1, 2, 3, 5, 6, 7})) ==
        "victims 0,4 (2); congestors 1-3,5-7 (6)");
}

TEST_CASE("congest: a run needs a congestor and two victims", "[congest]") {
  CHECK_THROWS_WITH(cg::choose_roles(4, 0.9, 1), Contains("leave 0 victim(s)"));
  CHECK_THROWS_WITH(cg::choose_roles(3, 0.1, 1), Contains("no congestor"));
  CHECK_THROWS_WITH(cg::choose_roles(8, 1.0, 1), Contains("not a fraction"));
  CHECK_THROWS_WITH(cg::named_roles(4, std::vector<std::uint32_t>{1, 2, 3}), Contains("leave 1 victim(s)"));
  CHECK_THROWS_AS(cg::named_roles(4, std::vector<std::uint32_t>{9}), UserError);
}

TEST_CASE("congest: a random ring is one cycle through every member, never to itself", "[congest]") {
  const std::vector<std::uint32_t> members{0, 3, 4, 7, 9, 12};
  for (std::uint32_t round = 0; round < 20; ++round) {
    const cg::Ring ring(members, 99, round);
    std::uint32_t at = members[0];
    std::set<std::uint32_t> seen;
    for (std::size_t k = 0; k < members.size(); ++k) {
      CHECK(seen.insert(at).second);
      const std::uint32_t next = ring.next_of(at);
      CHECK(next != at);
      CHECK(ring.prev_of(next) == at);
      at = next;
    }
    CHECK(at == members[0]);
    CHECK(seen.size() == members.size());
  }
  CHECK(cg::Ring(members, 99, 0).order() == cg::Ring(members, 99, 0).order());
  CHECK(cg::Ring(members, 99, 0).order() != cg::Ring(members, 99, 1).order());
  CHECK_THROWS_AS(cg::Ring(std::vector<std::uint32_t>{5}, 1), UserError);
  CHECK_THROWS_WITH(cg::Ring(members, 1).next_of(1), Contains("not on the ring"));
}

TEST_CASE("congest: congestor patterns as flows", "[congest]") {
  const cg::Roles roles = cg::named_roles(8, std::vector<std::uint32_t>{2, 3, 5, 6});
  using F = cg::Flow;
  using cg::FlowOp;
  CHECK(cg::congestor_flows(cg::Pattern::kIncast, roles, 3) ==
        std::vector<F>{{5, 3, FlowOp::kSend}, {6, 3, FlowOp::kSend}, {2, 3, FlowOp::kSend}});
  CHECK(cg::congestor_flows(cg::Pattern::kPutIncast, roles, 3, 2) ==
        std::vector<F>{{5, 3, FlowOp::kWrite}, {6, 3, FlowOp::kWrite}});
  const auto get = cg::congestor_flows(cg::Pattern::kGetBroadcast, roles, 2);
  CHECK(get == std::vector<F>{{3, 2, FlowOp::kRead}, {5, 2, FlowOp::kRead}, {6, 2, FlowOp::kRead}});
  CHECK(cg::receiving_ranks(get) == std::vector<std::uint32_t>{3, 5, 6});
  CHECK(cg::receiving_ranks(cg::congestor_flows(cg::Pattern::kIncast, roles, 6)) == std::vector<std::uint32_t>{6});
  const auto a2a = cg::congestor_flows(cg::Pattern::kAllToAll, roles, 2);
  CHECK(a2a.size() == 12);
  CHECK(std::none_of(a2a.begin(), a2a.end(), [](const F& f) { return f.initiator == f.peer; }));
  CHECK_THROWS_WITH(cg::congestor_flows(cg::Pattern::kIncast, roles, 0), Contains("not a congestor"));
  CHECK_THROWS_WITH(cg::congestor_flows(cg::Pattern::kIncast, roles, 3, 4), Contains("needs 4 congestors"));
}

TEST_CASE("congest: pattern names and ratios parse, bad ones are named", "[congest]") {
  CHECK(cg::parse_patterns("incast,all-to-all") ==
        std::vector<cg::Pattern>{cg::Pattern::kIncast, cg::Pattern::kAllToAll});
  CHECK(cg::parse_patterns("all").size() == 4);
  CHECK_THROWS_WITH(cg::parse_patterns("incast,fanout"), Contains("unknown congestor pattern \"fanout\""));
  CHECK_THROWS_WITH(cg::parse_patterns("incast,incast"), Contains("named twice"));
  CHECK(cg::parse_ratio("7:1") == 7);
  for (const char* bad : {"7", "7:2", "0:1", ":1", "x:1", "7:1:1"}) CHECK_THROWS_AS(cg::parse_ratio(bad), UserError);
  CHECK(cg::pattern_name(cg::Pattern::kGetBroadcast) == "get-broadcast");
  CHECK(cg::flow_op_name(cg::FlowOp::kRead) == "read");
}

TEST_CASE("congest: summaries take the worse tail for each metric, CIF > 1 means worse", "[congest]") {
  std::vector<double> lat(1000);
  for (std::size_t i = 0; i < lat.size(); ++i) lat[i] = static_cast<double>(i + 1);  // 1..1000
  const cg::Summary l = cg::summarize(lat, cg::Metric::kLatency);
  CHECK(l.samples == 1000);
  CHECK(l.mean == Approx(500.5));
  CHECK(l.median == 500);
  CHECK(l.tail90 == 900);
  CHECK(l.tail99 == 990);
  CHECK(l.tail999 == 999);
  const cg::Summary b = cg::summarize(lat, cg::Metric::kBandwidth);
  CHECK(b.median == 500);
  CHECK(b.tail90 == 100);  // the lowest 10 %
  CHECK(b.tail99 == 10);   // the lowest 1 %
  CHECK(b.tail999 == 1);
  cg::Summary iso{.samples = 100, .mean = 2.0, .tail99 = 4.0, .tail999 = 5.0};
  cg::Summary loaded{.samples = 100, .mean = 3.0, .tail99 = 12.0, .tail999 = 20.0};
  const cg::Cif lc = cg::cif(cg::Metric::kLatency, iso, loaded);
  CHECK(lc.mean == Approx(1.5));
  CHECK(lc.tail99 == Approx(3.0));
  const cg::Cif bc = cg::cif(cg::Metric::kBandwidth, cg::Summary{.samples = 100, .mean = 10.0, .tail99 = 8.0},
                                   cg::Summary{.samples = 100, .mean = 5.0, .tail99 = 2.0});
  CHECK(bc.mean == Approx(2.0));
  CHECK(bc.tail99 == Approx(4.0));
  CHECK(std::isnan(cg::cif(cg::Metric::kLatency, cg::Summary{}, loaded).mean));
  CHECK(cg::summarize({}, cg::Metric::kLatency).samples == 0);
}

TEST_CASE("congest: the hot port is named only where its victims stand out", "[congest]") {
  const std::vector<std::string> target_port{"rxe1/1"};
  std::vector<cg::VictimCif> v{{0, "rxe0/1", {1.1, 1.2}, ""}, {4, "rxe1/1", {3.0, 5.0}, ""}, {5, "rxe1/1", {2.5, 4.0}, ""},
                               {7, "rxe2/1", {1.0, 1.4}, ""}};
  const cg::Attribution a = cg::attribute(v, target_port);
  CHECK(a.hot_port == "rxe1/1");
  CHECK(a.behind == std::vector<std::uint32_t>{4, 5});
  CHECK(a.elsewhere == std::vector<std::uint32_t>{0, 7});
  CHECK(a.behind_tail99 == Approx(4.5));
  CHECK(a.elsewhere_tail99 == Approx(1.3));
  // No contrast: every victim suffers alike (a loaded fabric, not one hot port).
  for (auto& x : v) x.cif.tail99 = 3.0;
  CHECK(cg::attribute(v, target_port).hot_port.empty());
  // No congestion: nothing above the threshold.
  for (auto& x : v) x.cif.tail99 = 1.2;
  v[1].cif.tail99 = 1.9;
  CHECK(cg::attribute(v, target_port).hot_port.empty());
  // Every victim on one port, however hurt: nothing to contrast with, no port named.
  const std::vector<cg::VictimCif> one{{0, "rxe0/1", {3.0, 4.5}, ""}, {2, "rxe0/1", {2.8, 4.0}, ""}};
  CHECK(cg::attribute(one, target_port).hot_port.empty());
}

TEST_CASE("congest: a path is grouped under both of its ports", "[congest]") {
  // Victim 0 toward rxe1 suffers as much as victim 5 on rxe1; its other path (toward rxe2) does not.
  const std::vector<cg::VictimCif> paths{{0, "rxe0", {4.0, 5.0}, "rxe1"}, {5, "rxe1", {5.0, 6.0}, "rxe2"},
                                         {2, "rxe2", {1.0, 1.1}, "rxe3"}, {3, "rxe3", {1.0, 1.0}, "rxe0"},
                                         {0, "rxe0", {1.1, 1.2}, "rxe2"}};
  const std::vector<std::string> target{"rxe1"};
  const cg::Attribution a = cg::attribute(paths, target);
  CHECK(a.hot_port == "rxe1");
  CHECK(a.behind == std::vector<std::uint32_t>{0, 5});
  CHECK(a.elsewhere == std::vector<std::uint32_t>{0, 2, 3});
  CHECK(a.behind_tail99 == Approx(5.5));
  CHECK(a.elsewhere_tail99 == Approx(1.1));
  // Grouped by the victims' own ports only, rxe0 (5.0 and 1.2) would blur: here rxe0's paths'
  // median is 1.2 and no port but rxe1 stands out.
  std::vector<cg::VictimCif> even = paths;
  for (auto& p : even) p.cif.tail99 = 1.5;
  CHECK(cg::attribute(even, target).hot_port.empty());
  // A tail that stands out while the mean does not (a stray slow sample or two): no port named.
  std::vector<cg::VictimCif> spike = paths;
  for (auto& p : spike) p.cif.mean = 1.0;
  CHECK(cg::attribute(spike, target).hot_port.empty());
}

TEST_CASE("congest: ranks whose counters moved are named", "[congest]") {
  std::vector<cg::CounterDeltas> d(4);
  d[1]["rxe/hw_counters/retry_exceeded_err"] = 0;
  d[2]["rxe/hw_counters/rcvd_seq_err"] = 3;
  d[3]["ports/1/counters/port_rcv_errors"] = -1;
  CHECK(cg::ranks_with_moved_counters(d) == std::vector<std::uint32_t>{2, 3});
}
