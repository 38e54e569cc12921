// fabench-coll's command line (collbench/cli.hpp): CLI11 with its flags and
// validators, then build_specs(). Any argv either gives the benchmarks or
// fails with CLI::Error, UsageError or std::invalid_argument (a bad size);
// nothing else, and never an endless size sweep. Every benchmark built has a
// size from the list or the -b..-e range, in the order of a sweep by -f.
//
// Input: one argument per line, the first being the program name.
#include <algorithm>
#include <optional>
#include <stdexcept>

#include <CLI/CLI.hpp>

#include "fabench/collbench/cli.hpp"
#include "fuzz_common.hpp"

using namespace fabench;

namespace {

// Built once per 256 inputs (building it is most of the cost of an input):
// CLI11 clears an App's results when it parses again, and `options` goes
// back to its defaults before each parse. Not for ever: App::clear() keeps
// the App's record of the order of options parsed, which grows with every
// input.
struct Cli {
  Cli() : app("fuzz") { collbench::add_options(app, options); }
  CLI::App app;
  collbench::Cli options;
};

Cli& cli_for_this_input() {
  static std::optional<Cli> cli;
  static unsigned uses = 0;
  if (!cli || ++uses % 256 == 0) cli.emplace();
  return *cli;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Each list entry multiplies the benchmarks built (memory grows with the
  // product of the lists' lengths: the user's choice, not a parser's fault).
  if (std::count(data, data + size, ',') > 64) return 0;
  const auto args = fuzz::lines(fuzz::text(data, size));
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  Cli& cli = cli_for_this_input();
  collbench::Cli& c = cli.options;
  c = collbench::Cli{};
  try {
    cli.app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    FUZZ_CHECK(!harness::parse_error_text(e).empty() || e.get_exit_code() == 0);
    return 0;
  }
  try {
    const auto sizes = collbench::buffer_sizes(c);
    FUZZ_CHECK(!sizes.empty());
    if (c.sizes.empty()) {
      const auto lo = harness::parse_bytes(c.min_bytes);
      const auto hi = harness::parse_bytes(c.max_bytes);
      FUZZ_CHECK(sizes.front() == lo);
      for (std::size_t i = 1; i < sizes.size(); ++i) FUZZ_CHECK(sizes[i] == sizes[i - 1] * c.factor);
      FUZZ_CHECK(sizes.back() <= hi && sizes.back() > hi / c.factor);
    } else {
      FUZZ_CHECK(sizes == harness::parse_sizes(c.sizes));
    }
    const auto specs = collbench::build_specs(c);
    for (const auto& s : specs) {
      FUZZ_CHECK(s.bytes > 0);
      FUZZ_CHECK(!s.name().empty());
    }
  } catch (const harness::UsageError& e) {
    FUZZ_CHECK(std::string_view(e.what()).size() > 0);
  } catch (const std::invalid_argument& e) {
    FUZZ_CHECK(std::string_view(e.what()).size() > 0);
  }
  return 0;
}
