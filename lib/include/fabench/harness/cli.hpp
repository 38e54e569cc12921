// Command-line pieces shared by every fabench binary: run_main (the one place an
// exception becomes the line a user sees and the exit status), checks for
// numeric flags that name the flag and its range in plain words, the text of
// CLI11's parse errors as fabench prints them, the device flags every binary
// takes (-d -i -x --timeout -v), and the parsers of sizes, lists and path MTUs.
#pragma once

#include <charconv>
#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "fabench/base/error.hpp"
#include "fabench/harness/context.hpp"

// CLI11 costs seconds of compile time in every file that includes it, so
// only the files that build or read a command line include <CLI/CLI.hpp>;
// these declarations need only the names.
namespace CLI {
class App;
class ParseError;
class Validator;
}  // namespace CLI

namespace fabench::harness {

// Anything a user can get wrong on the command line or in an input file
// (bad value, contradiction): printed as one line, exit status 2. The name of
// fabench::UserError (base/error.hpp) that the command lines use.
using UsageError = fabench::UserError;

// The one rule every binary exits by: the epilogue of every --help (parse_command_line).
inline constexpr std::string_view kExitStatusHelp =
    "Exit status: 0 when every benchmark ran and passed its checks; 1 when the run failed (RDMA, a\n"
    "peer, the network, a failed check); 2 for bad input (a flag, a spec or config file, a\n"
    "contradiction, a launch that does not fit), before or during the run.\n";

// The one place an exception becomes what a user sees: runs `body` (a binary
// after its command line is parsed) and returns its exit status, or prints one
// line "PROG: error: <what()>" on stderr and returns 2 for bad input
// (fabench::UserError, ctrl::CtrlError kConfig) or 1 for a run that failed
// (verbs::VerbsError, fabench::RunError, any other ctrl::CtrlError, anything else).
[[nodiscard]] int run_main(std::string_view prog, const std::function<int()>& body);
// The exit status run_main gives `error` (2 or 1), for callers that report it otherwise.
[[nodiscard]] int exit_status_of(const std::exception& error) noexcept;

// A whole number in [min, max]: "-n must be at least 1 (got 0)",
// "-q must be from 1 to 1024 (got 2000)", "-n: 'abc' is not a whole number".
[[nodiscard]] CLI::Validator whole_number(std::string flag, std::int64_t min, std::int64_t max);
// A number (not only whole) of at least `min`, or above it when `inclusive` is
// false: "--alpha-us must be at least 0 (got -5)", "--ttft-ms must be more than 0 (got 0)".
[[nodiscard]] CLI::Validator number_at_least(std::string flag, double min, bool inclusive = true);
// A duration in seconds above zero: "--timeout must be more than 0 seconds (got -1)".
[[nodiscard]] CLI::Validator positive_seconds(std::string flag);

// Help text: every line within kHelpColumns; a value shown as N, NUM, VALUE or
// the option's own type_name, never CLI11's type strings.
inline constexpr std::size_t kHelpColumns = 100;
// Installs fabench's help layout on `app` (parse_command_line does it too).
void use_help_layout(CLI::App& app);
// The options of `group` are listed by --help-all only (perftest's flags in
// fabench-lat/-bw), so that --help stays one screen.
void help_all_only(CLI::App& app, std::string group);
// --help (all = false) or --help-all (all = true) of `app`.
[[nodiscard]] std::string help_text(CLI::App& app, bool all);

// One line for a CLI11 parse error, without CLI11's "--long-name: " prefix
// where one of the validators above already names the flag.
[[nodiscard]] std::string parse_error_text(const CLI::ParseError& error);

// The command line of every binary. Every binary gets -V/--version (fabench's
// build version), -h/--help and --help-all in fabench's layout. -h/--help
// prints the help, then `extra_help` (before Google Benchmark would print its
// own), then kExitStatusHelp; otherwise Google Benchmark takes its
// --benchmark_* flags out of argv
// (a bad --benchmark_format/--benchmark_out_format value is refused here:
// Google Benchmark itself would print its usage and exit 0) and CLI11 parses
// the rest; an unknown flag is named ("unknown flag -q"), not blamed on the
// positional argument after it. Returns an exit status when the program
// should end here (0 after help or --version, 2 after a bad flag, printed as
// one line "PROG: error: ... (see --help)"), std::nullopt to go on.
[[nodiscard]] std::optional<int> parse_command_line(CLI::App& app, int& argc, char** argv, std::string_view prog,
                                                    std::string_view extra_help);

// The flags that pick the device and bound every wait, the same in every
// binary: -d/--ib-dev, -i/--ib-port, -x/--gid-index, --timeout, -v.
struct DeviceFlags {
  std::string device;     // "" = first device with an ACTIVE port
  unsigned ib_port = 0;   // 0 = first ACTIVE port
  int gid_index = -1;     // -1 = automatic
  bool ipv6_gid = false;  // automatic GID: RoCE v2 over IPv6 (a binary's --ipv6, where it has one)
  double timeout_s = 30;  // peer and progress waits
  bool verbose = false;

  [[nodiscard]] ContextOptions context_options() const;
  [[nodiscard]] std::chrono::milliseconds timeout() const;
};
void add_device_flags(CLI::App& app, DeviceFlags& flags);

// The whole of `text` as an integer of type T; nullopt when it is empty, not
// a number, followed by anything else, or outside T's range.
template <std::integral T>
[[nodiscard]] std::optional<T> parse_integer(std::string_view text) noexcept {
  T out{};
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, out);
  if (text.empty() || ec != std::errc{} || ptr != end) return std::nullopt;
  return out;
}

// "a,b,c" -> {"a", "b", "c"}; "" -> {""}.
[[nodiscard]] std::vector<std::string> split_list(const std::string& text, char sep = ',');

// An integer item of a flag's list within [lo, hi]; UserError "FLAG must be from LO to HI (got ITEM)".
[[nodiscard]] inline std::uint32_t parse_count(const std::string& item, const char* flag, std::uint32_t lo,
                                               std::uint32_t hi) {
  const auto v = parse_integer<std::uint32_t>(item);
  if (!v || *v < lo || *v > hi) throw UserError(fmt::format("{} must be from {} to {} (got {})", flag, lo, hi, item));
  return *v;
}

// A comma-separated flag value parsed item by item: `parse` throws UserError for a bad item,
// which comes back as "FLAG TEXT: <its message>"; an empty list is "FLAG is empty".
template <typename T, typename Parse>
[[nodiscard]] std::vector<T> parse_list(const std::string& text, const char* flag, Parse parse) {
  std::vector<T> out;
  for (const auto& item : split_list(text)) {
    try {
      out.push_back(parse(item));
    } catch (const UserError& e) {
      throw UserError(fmt::format("{} {}: {}", flag, text, e.what()));
    }
  }
  if (out.empty()) throw UserError(fmt::format("{} is empty", flag));
  return out;
}
// "4G", "512M", "64KiB", "65536" -> bytes (K, M, G are powers of 2^10).
// Throws UserError ("'5X': unknown unit 'X' (use K, M or G)", without a flag's name).
[[nodiscard]] std::uint64_t parse_bytes(const std::string& text);
// "2,64,4K,1M" -> {2, 64, 4096, 1048576}; 0 and empty items are refused.
// Throws UsageError naming `flag`: "-s 2,,4: an empty size in the list".
[[nodiscard]] std::vector<std::uint64_t> parse_sizes(const std::string& text, std::string_view flag = "-s");
// parse_bytes for a flag's value: UsageError "--max-mem: '5X': unknown unit 'X' (use K, M or G)".
[[nodiscard]] std::uint64_t parse_flag_bytes(std::string_view flag, const std::string& text);
// -b MIN -e MAX -f FACTOR: MIN, MIN*F, ... up to MAX (no overflow near 2^64).
// Throws UsageError naming -b or -e: "-b: 'abc' is not a size", "-b 4M -e 1K: need 0 < -b <= -e".
[[nodiscard]] std::vector<std::uint64_t> size_range(const std::string& min_text, const std::string& max_text,
                                                    std::uint64_t factor);
// 2, 4, ..., 8 MiB: perftest's -a sweep.
[[nodiscard]] std::vector<std::uint64_t> all_sizes();

// The path MTUs verbs knows ("256, 512, 1024, 2048 or 4096"), for help texts.
inline constexpr std::string_view kPathMtuChoices = "256, 512, 1024, 2048 or 4096";
// None when `bytes` is 0 (automatic) or one of those, else the error naming `flag`:
// "-m 3000: MTU must be 256, 512, 1024, 2048 or 4096".
[[nodiscard]] std::optional<UserError> check_path_mtu(std::string_view flag, std::uint32_t bytes);

}  // namespace fabench::harness
