// Numeric flag checks: every error names the flag and the allowed range in
// plain words, never CLI11's "Value 0 not in range 0.000000 to 1.79e308".
#include <catch2/catch.hpp>

#include <limits>
#include <string>
#include <vector>

#include "fabench/harness/cli.hpp"

using fabench::harness::parse_error_text;
using fabench::harness::positive_seconds;
using fabench::harness::whole_number;

namespace {

// Parses `args` with -n (>= 1), -q (1..1024) and -D (seconds); returns the
// error line, or "" when the arguments were accepted.
std::string parse(std::vector<std::string> args) {
  CLI::App app;
  long long n = 0;
  unsigned q = 0;
  double d = 0;
  app.add_option("-n,--iters", n)->check(whole_number("-n", 1, std::numeric_limits<std::int64_t>::max()));
  app.add_option("-q,--qp", q)->check(whole_number("-q", 1, 1024));
  app.add_option("-D,--duration", d)->check(positive_seconds("-D"));
  std::vector<const char*> argv{"prog"};
  for (const auto& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), const_cast<char**>(argv.data()));
  } catch (const CLI::ParseError& e) {
    return parse_error_text(e);
  }
  return {};
}

}  // namespace

TEST_CASE("numeric flags: errors name the flag and the range", "[harness][cli]") {
  CHECK(parse({"-n", "0"}) == "-n must be at least 1 (got 0)");
  CHECK(parse({"--iters", "-4"}) == "-n must be at least 1 (got -4)");
  CHECK(parse({"-n", "12x"}) == "-n: '12x' is not a whole number (expected at least 1)");
  CHECK(parse({"-n", "99999999999999999999"}) == "-n: 99999999999999999999 is too large (at most 9223372036854775807)");
  CHECK(parse({"-q", "0"}) == "-q must be from 1 to 1024 (got 0)");
  CHECK(parse({"-q", "1025"}) == "-q must be from 1 to 1024 (got 1025)");
  CHECK(parse({"-D", "-1"}) == "-D must be more than 0 seconds (got -1)");
  CHECK(parse({"-D", "0"}) == "-D must be more than 0 seconds (got 0)");
  CHECK(parse({"-D", "soon"}) == "-D: 'soon' is not a number of seconds");
  CHECK(parse({"--duration=-1"}) == "-D must be more than 0 seconds (got -1)");
}

TEST_CASE("numeric flags: values in range pass through unchanged", "[harness][cli]") {
  CHECK(parse({"-n", "1", "-q", "1024", "-D", "0.25"}).empty());
  CHECK(parse({"-n", "9223372036854775807"}).empty());
}
