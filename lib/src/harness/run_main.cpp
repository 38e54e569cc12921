// run_main: the one place an exception becomes the line a user sees and the exit status, the
// same rule in every binary (base/error.hpp; the --help epilogue, kExitStatusHelp, says it).
#include <iostream>

#include "fabench/base/error.hpp"
#include "fabench/ctrl/error.hpp"
#include "fabench/harness/cli.hpp"

namespace fabench::harness {

int exit_status_of(const std::exception& error) noexcept {
  if (dynamic_cast<const UserError*>(&error) != nullptr) return kExitUserError;
  // A bad rank, size, address, port or token from the flags or the launcher's environment.
  if (const auto* ctrl = dynamic_cast<const ctrl::CtrlError*>(&error)) {
    return ctrl->kind() == ctrl::CtrlError::Kind::kConfig ? kExitUserError : kExitRunError;
  }
  return kExitRunError;
}

int run_main(std::string_view prog, const std::function<int()>& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    std::cerr << prog << ": error: " << e.what() << "\n";
    return exit_status_of(e);
  }
}

}  // namespace fabench::harness
