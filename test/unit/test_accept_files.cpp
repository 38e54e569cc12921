// lib/accept's two input files, written to a temporary directory: --pairs files (indexes, names,
// comments, and a one-line error naming file:line for each mistake) and the JSON spec (every field,
// the defaults, and one line naming file and field per error).
#include <catch2/catch.hpp>

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "fabench/accept/error.hpp"
#include "fabench/accept/schedule.hpp"
#include "fabench/accept/spec.hpp"
#include "temp_dir.hpp"

using namespace fabench::accept;
namespace fs = std::filesystem;
using fabench::test::TempDir;

namespace {

const std::vector<std::string> kNames{"h0", "h1", "h2", "h3"};

// The error load_pairs throws for `text`, with the file's path replaced by "F".
std::string pairs_error(const TempDir& dir, const std::string& text) {
  const fs::path p = dir.write("pairs.txt", text);
  try {
    (void)load_pairs(p, kNames);
  } catch (const AcceptError& e) {
    std::string what = e.what();
    const std::string file = p.string();
    if (what.starts_with(file)) what.replace(0, file.size(), "F");
    return what;
  }
  return "no error";
}

std::string spec_error(const TempDir& dir, const std::string& text) {
  const fs::path p = dir.write("spec.json", text);
  try {
    (void)load_spec(p);
  } catch (const AcceptError& e) {
    std::string what = e.what();
    const std::string file = p.string();
    if (what.starts_with(file)) what.replace(0, file.size(), "F");
    return what;
  }
  return "no error";
}

}  // namespace

TEST_CASE("accept: --pairs file: indexes, names, comments, blank lines", "[accept]") {
  const TempDir dir;
  const fs::path p = dir.write("pairs.txt",
                               "# leaf 1 to leaf 2\n"
                               "0 1\n"
                               "\n"
                               "h2\th3   # by name, tab separated\r\n"
                               "  3 h0\n"
                               "h1 2\n");
  CHECK(load_pairs(p, kNames) == std::vector<Pair>{{0, 1}, {2, 3}, {3, 0}, {1, 2}});
  CHECK(pack_rounds(4, load_pairs(p, kNames)).rounds.size() == 2);
  // No names: indexes only.
  const std::vector<std::string> unnamed(4);
  CHECK(load_pairs(dir.write("idx.txt", "0 3\n2 1\n"), unnamed) == std::vector<Pair>{{0, 3}, {2, 1}});
}

TEST_CASE("accept: --pairs file errors name the file and the line", "[accept]") {
  const TempDir dir;
  CHECK(pairs_error(dir, "0 1\n0 1 2\n") == "F:2: expected two nodes \"A B\" (got 3 fields)");
  CHECK(pairs_error(dir, "0\n") == "F:1: expected two nodes \"A B\" (got 1 fields)");
  CHECK(pairs_error(dir, "0 1\n# c\nh9 1\n") == "F:3: unknown node \"h9\" (a node index 0..3 or a node name)");
  CHECK(pairs_error(dir, "0 4\n") == "F:1: unknown node \"4\" (a node index 0..3 or a node name)");
  CHECK(pairs_error(dir, "0 -1\n") == "F:1: unknown node \"-1\" (a node index 0..3 or a node name)");
  CHECK(pairs_error(dir, "0 1\nh2 2\n") == "F:2: self-pair h2 2 (node 2)");
  CHECK(pairs_error(dir, "0 1\n1 3\n\nh3 h1\n") == "F:4: duplicate pair h3 h1 (first on line 2)");
  CHECK(pairs_error(dir, "# nothing\n\n") == "F: no pairs");
  CHECK_THROWS_WITH(load_pairs(dir.write("one.txt", "0 1\n"), std::vector<std::string>{"h0"}),
                    Catch::Matchers::Contains("node count 1 is outside 2..8192"));
  const fs::path missing = dir.write("x", "") / "nope.txt";
  CHECK_THROWS_WITH(load_pairs(missing, kNames), missing.string() + ": cannot open (no such file, or not readable)");
}

TEST_CASE("accept: spec file: every field, defaults for the rest, round trip", "[accept]") {
  const TempDir dir;
  const Spec s = load_spec(dir.write("spec.json", R"({
    "port_gbps": 400, "min_bw_fraction": 0.85, "min_bidir_fraction": 0.8, "max_p99_us": 12.5,
    "outlier_k": 6, "outlier_min_fraction": 0.1, "retests": 2,
    "zero_counters": ["symbol_error"], "node_bad_fraction": 0.6 })"));
  CHECK(s.port_gbps == 400);
  CHECK(s.min_bw_fraction == 0.85);
  CHECK(s.min_bidir_fraction == 0.8);
  CHECK(s.max_p99_us == 12.5);
  CHECK(s.outlier_k == 6);
  CHECK(s.outlier_min_fraction == 0.1);
  CHECK(s.retests == 2);
  CHECK(s.zero_counters == std::vector<std::string>{"symbol_error"});
  CHECK(s.node_bad_fraction == 0.6);
  CHECK(spec_from_json(spec_to_json(s), "x") == s);

  const Spec d = load_spec(dir.write("empty.json", "{}"));
  CHECK(d == Spec{});
  CHECK(d.min_bw_fraction == 0.9);
  CHECK(d.outlier_k == 5);
  CHECK(d.retests == 1);
  CHECK(d.zero_counters.size() == 7);
  CHECK(spec_from_json(nlohmann::json{{"zero_counters", nlohmann::json::array()}}, "x").zero_counters.empty());
}

TEST_CASE("accept: spec file errors name the file and the field", "[accept]") {
  const TempDir dir;
  CHECK(spec_error(dir, R"({"min_bw_fraction": 1.5})") == "F: min_bw_fraction must be a number within 0..1 (got 1.5)");
  CHECK(spec_error(dir, R"({"min_bw_fraction": "0.9"})") == "F: min_bw_fraction must be a number (got \"0.9\")");
  CHECK(spec_error(dir, R"({"min_bidir_fraction": -0.1})") ==
        "F: min_bidir_fraction must be a number within 0..1 (got -0.1)");
  CHECK(spec_error(dir, R"({"port_gbps": -100})") == "F: port_gbps must be a number at least 0 (got -100)");
  CHECK(spec_error(dir, R"({"max_p99_us": null})") == "F: max_p99_us must be a number (got null)");
  CHECK(spec_error(dir, R"({"outlier_k": -1})") == "F: outlier_k must be a number at least 0 (got -1)");
  CHECK(spec_error(dir, R"({"outlier_min_fraction": 1})") ==
        "F: outlier_min_fraction must be a number within 0..1 (excluded) (got 1)");
  CHECK(spec_error(dir, R"({"node_bad_fraction": 1})") ==
        "F: node_bad_fraction must be a number within 0..1 (excluded) (got 1)");
  CHECK(spec_error(dir, R"({"retests": 1.5})") == "F: retests must be an integer within 0..10 (got 1.5)");
  CHECK(spec_error(dir, R"({"retests": -1})") == "F: retests must be an integer within 0..10 (got -1)");
  CHECK(spec_error(dir, R"({"retests": 11})") == "F: retests must be an integer within 0..10 (got 11)");
  CHECK(spec_error(dir, R"({"zero_counters": "symbol_error"})") ==
        "F: zero_counters must be an array of counter names (got \"symbol_error\")");
  CHECK(spec_error(dir, R"({"zero_counters": ["a", 3]})") == "F: zero_counters must hold non-empty strings (got 3)");
  CHECK(spec_error(dir, R"({"zero_counters": [""]})") == "F: zero_counters must hold non-empty strings (got \"\")");
  CHECK(spec_error(dir, R"({"min_bw": 0.9})") ==
        "F: \"min_bw\" is not a spec field (fields: port_gbps, min_bw_fraction, min_bidir_fraction, max_p99_us, "
        "outlier_k, outlier_min_fraction, retests, zero_counters, node_bad_fraction)");
  // A field name with a control character (found by fuzz_accept_spec): escaped, still one line.
  CHECK(spec_error(dir, R"({"a\nb": 1})") ==
        "F: \"a\\nb\" is not a spec field (fields: port_gbps, min_bw_fraction, min_bidir_fraction, max_p99_us, "
        "outlier_k, outlier_min_fraction, retests, zero_counters, node_bad_fraction)");
  CHECK(spec_error(dir, "[1, 2]") == "F: not a JSON object");
  CHECK(spec_error(dir, R"({"retests": 1,})") == "F: not JSON (parse error at byte 15)");
  CHECK(spec_error(dir, R"({"port_gbps": 1e400})") == "F: not JSON (a number out of range)");

  // Flags fill a Spec and validate() it under the name the driver chooses.
  Spec s;
  s.min_bw_fraction = 2;
  CHECK_THROWS_WITH(validate(s, "--min-bw-fraction"),
                    "--min-bw-fraction: min_bw_fraction must be a number within 0..1 (got 2)");
  s = Spec{};
  s.retests = 11;
  CHECK_THROWS_WITH(validate(s), "spec: retests must be an integer within 0..10 (got 11)");
}
