// The two kinds of error every fabench binary tells apart (docs/ARCHITECTURE.md, errors), as
// rdma-core's pyverbs splits PyverbsUserError from PyverbsRDMAError:
//   UserError  bad input the user can fix (a flag, a spec or config file, a contradiction,
//              a launch that does not fit the benchmark): one line, exit status 2;
//   RunError   a run that failed (RDMA: verbs::VerbsError is one; a peer that broke the
//              protocol or sent garbage; the system refusing memory or a file): exit status 1.
// The control plane's CtrlError (ctrl/error.hpp) is the third type that reaches main: its
// kind says which of the two it is (kConfig: bad input; the others: a peer or the network).
// harness::run_main (harness/main.hpp) is the one place that turns them into the line and the
// exit status. Nothing else that a library layer throws reaches main: no std::invalid_argument,
// std::runtime_error or std::logic_error crosses a layer boundary.
#pragma once

#include <stdexcept>

namespace fabench {

// A std::invalid_argument, so that a caller of a parser may catch either name.
class UserError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

class RunError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The exit statuses of the rule above.
inline constexpr int kExitUserError = 2;
inline constexpr int kExitRunError = 1;

}  // namespace fabench
