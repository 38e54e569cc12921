// AcceptError: the one exception lib/accept throws for what a user (or a driver) can get wrong: a
// --pairs file, a spec file or flag value, results that do not fit the node list. what() is one
// line naming the file and the line or field, ready to print as it is.
#pragma once

#include <stdexcept>

namespace fabench::accept {

class AcceptError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace fabench::accept
