// The error model (base/error.hpp): one user-error type, one run-error type, and run_main, the
// one place an exception becomes the line a user sees and the exit status (2 bad input, 1 run).
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include <catch2/catch.hpp>

#include "fabench/accept/error.hpp"
#include "fabench/base/error.hpp"
#include "fabench/ctrl/error.hpp"
#include "fabench/ctrl/record.hpp"
#include "fabench/harness/cli.hpp"
#include "fabench/kv/error.hpp"
#include "fabench/verbs/error.hpp"

namespace {

using fabench::RunError;
using fabench::UserError;
using fabench::ctrl::CtrlError;
using fabench::harness::exit_status_of;
using fabench::harness::run_main;

// run_main's stderr and exit status for a body that throws `error`.
template <class E>
std::pair<std::string, int> errors_run_main_with(const E& error) {
  std::ostringstream captured;
  auto* old = std::cerr.rdbuf(captured.rdbuf());
  const int rc = run_main("fabench-test", [&]() -> int { throw error; });
  std::cerr.rdbuf(old);
  return {captured.str(), rc};
}

}  // namespace

TEST_CASE("errors: one user-error type under every old name", "[errors]") {
  STATIC_REQUIRE(std::is_same_v<fabench::accept::AcceptError, UserError>);
  STATIC_REQUIRE(std::is_same_v<fabench::kv::KvError, UserError>);
  STATIC_REQUIRE(std::is_same_v<fabench::harness::UsageError, UserError>);
  // A parser's caller may still catch the standard name.
  STATIC_REQUIRE(std::is_base_of_v<std::invalid_argument, UserError>);
  STATIC_REQUIRE(std::is_base_of_v<RunError, fabench::verbs::VerbsError>);
  STATIC_REQUIRE(std::is_base_of_v<RunError, fabench::ctrl::RecordError>);
}

TEST_CASE("errors: exit status 2 for bad input, 1 for a run that failed", "[errors]") {
  CHECK(exit_status_of(UserError("-s: 'x' is not a size")) == 2);
  CHECK(exit_status_of(CtrlError(CtrlError::Kind::kConfig, "WORLD_SIZE=0")) == 2);
  CHECK(exit_status_of(RunError("peer offered 2 queue pairs, expected 1")) == 1);
  CHECK(exit_status_of(fabench::verbs::VerbsError("ibv_reg_mr", 12, "raise ulimit -l")) == 1);
  CHECK(exit_status_of(fabench::ctrl::RecordError("field rate missing")) == 1);
  for (auto kind : {CtrlError::Kind::kTimeout, CtrlError::Kind::kClosed, CtrlError::Kind::kPeerError,
                    CtrlError::Kind::kVersion, CtrlError::Kind::kAuth}) {
    CHECK(exit_status_of(CtrlError(kind, "peer")) == 1);
  }
  CHECK(exit_status_of(std::runtime_error("anything else")) == 1);
}

TEST_CASE("errors: run_main prints one line naming the program", "[errors]") {
  CHECK(run_main("fabench-test", [] { return 0; }) == 0);
  CHECK(run_main("fabench-test", [] { return 1; }) == 1);
  auto [text, rc] = errors_run_main_with(UserError("--op nope: unknown operation"));
  CHECK(rc == 2);
  CHECK(text == "fabench-test: error: --op nope: unknown operation\n");
  std::tie(text, rc) = errors_run_main_with(CtrlError(CtrlError::Kind::kTimeout, "rank 1 silent for 30 s"));
  CHECK(rc == 1);
  CHECK(text == "fabench-test: error: rank 1 silent for 30 s\n");
}

TEST_CASE("errors: the exit-status rule is the --help epilogue", "[errors]") {
  const std::string rule(fabench::harness::kExitStatusHelp);
  CHECK(rule.starts_with("Exit status: "));
  CHECK(rule.find("1 when the run failed") != std::string::npos);
  CHECK(rule.find("2 for bad input") != std::string::npos);
  for (std::size_t at = 0, end = 0; at < rule.size(); at = end + 1) {
    end = rule.find('\n', at);
    CHECK(end - at <= fabench::harness::kHelpColumns);
  }
}
