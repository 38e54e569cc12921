// AcceptError: the name lib/accept throws fabench::UserError by (base/error.hpp), for what a user
// (or a driver) can get wrong: a --pairs file, a spec file or flag value, results that do not fit
// the node list. what() is one line naming the file and the line or field, ready to print.
#pragma once

#include "fabench/base/error.hpp"

namespace fabench::accept {

using AcceptError = fabench::UserError;

}  // namespace fabench::accept
