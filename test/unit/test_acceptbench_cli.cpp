// fabench-accept's command line: the spec from flags over a file, sizes, schedules, the bound.
#include <CLI/CLI.hpp>
#include <catch2/catch.hpp>

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
