// lib/ep reports what a user can get wrong (a model, a config.json, a routing spec or file, a
// shape that does not fit the ranks) through fail(): one line, a fabench::UserError (exit 2).
#pragma once

#include <string>

namespace fabench::ep {

[[noreturn]] void fail(std::string message);

}  // namespace fabench::ep
