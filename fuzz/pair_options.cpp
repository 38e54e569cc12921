// The whole command line of fabench-lat / fabench-bw (pair/options.hpp), as
// pair::app parses it: CLI11 with the pair's flags and validators, then
// check_contradictions() and build_specs(). Any argv either gives specs or
// fails with CLI::Error (a parse error, --help, --version), UsageError or
// std::invalid_argument (a bad size); nothing else. Every spec built is one
// validate() accepts and that survives the trip through Command parameters.
//
// Input: one argument per line; the first line is the program, and a program
// name containing "lat" gets fabench-lat's flags, any other fabench-bw's.
#include <algorithm>
#include <optional>
#include <stdexcept>

#include <CLI/CLI.hpp>

#include "fabench/pair/options.hpp"
#include "fuzz_common.hpp"

using namespace fabench;

namespace {

// One CLI::App per kind, built once per 256 inputs (building it is most of
// the cost of an input): CLI11 clears an App's results when it parses again,
// and `options` goes back to its defaults before each parse. Not for ever:
// App::clear() keeps the App's record of the order of options parsed, which
// grows with every input.
struct Cli {
  explicit Cli(pair::Kind kind) : app("fuzz") { pair::add_options(app, options, kind); }
  CLI::App app;
  pair::Options options;
};

Cli& cli_for_this_input(pair::Kind kind) {
  static std::optional<Cli> lat;
  static std::optional<Cli> bw;
  static unsigned lat_uses = 0;
  static unsigned bw_uses = 0;
  const bool is_lat = kind == pair::Kind::kLatency;
  auto& cli = is_lat ? lat : bw;
  if (!cli || ++(is_lat ? lat_uses : bw_uses) % 256 == 0) cli.emplace(kind);
  return *cli;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Each list entry multiplies the benchmarks built (memory grows with the
  // product of the lists' lengths: the user's choice, not a parser's fault).
  if (std::count(data, data + size, ',') > 64) return 0;
  const auto args = fuzz::lines(fuzz::text(data, size));
  const auto kind = args[0].find("lat") != std::string::npos ? pair::Kind::kLatency : pair::Kind::kBandwidth;
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  Cli& cli = cli_for_this_input(kind);
  CLI::App& app = cli.app;
  pair::Options& o = cli.options;
  o = pair::Options{};
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    FUZZ_CHECK(!harness::parse_error_text(e).empty() || e.get_exit_code() == 0);
    return 0;
  }
  try {
    pair::check_contradictions(o);
    const auto specs = pair::build_specs(o, kind);
    FUZZ_CHECK(!specs.empty());
    for (const auto& s : specs) {
      FUZZ_CHECK(s.kind == kind);
      FUZZ_CHECK(pair::validate(s).empty());
      FUZZ_CHECK(pair::TestSpec::from_params(s.to_params()) == s);
    }
  } catch (const harness::UsageError& e) {
    FUZZ_CHECK(std::string_view(e.what()).size() > 0);
  } catch (const std::invalid_argument& e) {
    FUZZ_CHECK(std::string_view(e.what()).size() > 0);
  }
  return 0;
}
