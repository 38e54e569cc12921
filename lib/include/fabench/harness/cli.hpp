// Command-line pieces shared by every fabench binary: the one user-error type,
// checks for numeric flags that name the flag and its range in plain words,
// and the text of CLI11's parse errors as fabench prints them.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include <CLI/CLI.hpp>

namespace fabench::harness {

// Anything a user can get wrong on the command line or in an input file
// (bad value, contradiction): printed as one line, exit status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A whole number in [min, max]: "-n must be at least 1 (got 0)",
// "-q must be from 1 to 1024 (got 2000)", "-n: 'abc' is not a whole number".
[[nodiscard]] CLI::Validator whole_number(std::string flag, std::int64_t min, std::int64_t max);
// A duration in seconds above zero: "--timeout must be more than 0 seconds (got -1)".
[[nodiscard]] CLI::Validator positive_seconds(std::string flag);

// One line for a CLI11 parse error, without CLI11's "--long-name: " prefix
// where one of the validators above already names the flag.
[[nodiscard]] std::string parse_error_text(const CLI::ParseError& error);

}  // namespace fabench::harness
