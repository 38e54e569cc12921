// What the pair command-line unit tests share.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "fabench/pair/options.hpp"

namespace fabench::test {

// The pair's flags for `kind` parsed from `args` (CLI11 only: no contradiction checks).
inline pair::Options parse(pair::Kind kind, const std::vector<std::string>& args) {
  CLI::App app;
  pair::Options o;
  pair::add_options(app, o, kind);
  std::vector<const char*> argv{"prog"};
  for (const auto& a : args) argv.push_back(a.c_str());
  app.parse(static_cast<int>(argv.size()), const_cast<char**>(argv.data()));
  return o;
}

}  // namespace fabench::test
