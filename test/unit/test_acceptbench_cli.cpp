// fabench-accept's command line: the spec from flags over a file, sizes, schedules, the bound.
#include <CLI/CLI.hpp>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <set>
#include <utility>

#include "fabench/acceptbench/cli.hpp"
#include "temp_dir.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::Equals;
using fabench::acceptbench::Cli;
using fabench::harness::UsageError;

namespace {

Cli parse(std::vector<std::string> args) {
  CLI::App app;
  Cli c;
  fabench::acceptbench::add_options(app, c);
  std::reverse(args.begin(), args.end());
  app.parse(args);
  return c;
}

}  // namespace

TEST_CASE("acceptbench: flags override the spec file field by field", "[accept]") {
  fabench::test::TempDir tmp;
  const auto spec = tmp.write("spec.json", R"({"min_bw_fraction": 0.8, "retests": 3, "max_p99_us": 20})");
  const Cli c = parse({"--spec", spec.string(), "--retests", "0", "--zero-counters", "symbol_error,rcvd_seq_err"});
  const auto s = fabench::acceptbench::build_spec(c);
  CHECK(s.min_bw_fraction == 0.8);
  CHECK(s.max_p99_us == 20);
  CHECK(s.retests == 0);
  CHECK(s.zero_counters == std::vector<std::string>{"symbol_error", "rcvd_seq_err"});
  CHECK(fabench::acceptbench::build_spec(parse({"--zero-counters", ""})).zero_counters.empty());
  CHECK_THROWS_WITH(fabench::acceptbench::build_spec(parse({"--min-bw-fraction", "1.5"})),
                    Equals("spec: min_bw_fraction must be a number within 0..1 (got 1.5)"));
  CHECK_THROWS_AS(
      fabench::acceptbench::build_spec(parse({"--spec", tmp.write("x", "").parent_path().string() + "/missing.json"})),
      UsageError);
}

TEST_CASE("acceptbench: sizes, schedules and the pair's time limits", "[accept]") {
  CHECK(fabench::acceptbench::bw_bytes(parse({})) == (1U << 20));
  CHECK(fabench::acceptbench::bw_bytes(parse({"-s", "64K"})) == 65536);
  CHECK_THROWS_WITH(fabench::acceptbench::bw_bytes(parse({"-s", "2G"})),
                    Equals("-s must be from 1 to 1G bytes (got 2G)"));
  CHECK_THROWS_WITH(fabench::acceptbench::bw_bytes(parse({"-s", "x"})), Contains("-s: 'x' is not a size"));
  const std::vector<std::string> names{"h0", "h1", "h2", "h3", "h4"};
  CHECK(fabench::acceptbench::build_schedule(parse({}), 5, names).rounds.size() == 5);
  CHECK(fabench::acceptbench::build_schedule(parse({"--schedule", "bisection"}), 5, names).rounds.size() == 3);
  CHECK_THROWS_WITH(fabench::acceptbench::build_schedule(parse({"--schedule", "ring"}), 5, names),
                    Equals("--schedule takes round-robin or bisection (got ring)"));
  fabench::test::TempDir tmp;
  const auto pairs = tmp.write("pairs.txt", "h0 h1\nh1 h2\n3 4\n");
  CHECK(fabench::acceptbench::build_schedule(parse({"--pairs", pairs.string()}), 5, names).pair_count() == 3);
  const auto bad = tmp.write("bad.txt", "h0 h9\n");
  CHECK_THROWS_WITH(fabench::acceptbench::build_schedule(parse({"--pairs", bad.string()}), 5, names),
                    Contains("bad.txt:1: unknown node \"h9\""));
  // The limit of a pair is its plan plus one stall plus 2 s for the report.
  const Cli c = parse({"-D", "2", "--lat-iters", "1000", "--timeout", "10"});
  CHECK(fabench::acceptbench::pair_timeout_seconds(c) == Approx(fabench::acceptbench::pair_seconds(c) + 12));
  CHECK(fabench::acceptbench::pair_seconds(c) >= 3 * 2 + 1.0);
}

TEST_CASE("acceptbench: -u/--qp-timeout is the world binaries' one flag: 20 unless given", "[accept]") {
  CHECK(parse({}).ranks.qp_timeout == 20);
  CHECK(parse({"-u", "17"}).ranks.qp_timeout == 17);
  CHECK_THROWS_AS(parse({"-u", "32"}), CLI::ValidationError);
}

TEST_CASE("acceptbench: --plan lists --rounds of the schedule, or writes all of it as JSON", "[accept]") {
  using fabench::acceptbench::plan_json;
  using fabench::acceptbench::plan_text;
  const auto spec = fabench::acceptbench::build_spec(parse({}));
  // 20 nodes: 19 rounds; 8 listed unless --rounds says otherwise.
  const std::string eight = plan_text(parse({"--plan", "--nodes", "20"}), spec);
  CHECK_THAT(eight, Contains("20 nodes: 190 pairs in 19 rounds (round-robin)"));
  CHECK_THAT(eight, Contains("round 8:"));
  CHECK_THAT(eight, !Contains("round 9:"));
  CHECK_THAT(eight, Contains("... 11 more rounds (--rounds all lists them, --json FILE writes them)"));
  const std::string all = plan_text(parse({"--plan", "--nodes", "20", "--rounds", "all"}), spec);
  CHECK_THAT(all, Contains("round 19:"));
  CHECK_THAT(all, !Contains("more rounds"));
  CHECK_THAT(plan_text(parse({"--plan", "--nodes", "20", "--rounds", "10"}), spec), Contains("... 9 more rounds"));
  CHECK_THROWS_WITH(plan_text(parse({"--plan", "--nodes", "20", "--rounds", "0"}), spec),
                    "--rounds 0: expected a number of rounds (1 or more) or all");
  CHECK_THROWS_WITH(plan_text(parse({"--plan"}), spec), "--plan needs --nodes N");
  CHECK_THROWS_WITH(plan_text(parse({"--plan", "--nodes", "4", "--junit", "x.xml"}), spec),
                    "--junit describes a run's pairs; --plan measures none (--json FILE)");
  // JSON: every round, every pair, each pair once.
  const auto j = nlohmann::json::parse(plan_json(parse({"--plan", "--nodes", "20"}), spec));
  CHECK(j["plan"]["nodes"] == 20);
  CHECK(j["plan"]["pairs"] == 190);
  REQUIRE(j["plan"]["rounds"].size() == 19);
  std::set<std::pair<int, int>> pairs;
  for (const auto& round : j["plan"]["rounds"])
    for (const auto& p : round) pairs.emplace(p[0].get<int>(), p[1].get<int>());
  CHECK(pairs.size() == 190);
}
