#include "fabench/ep/error.hpp"

#include "fabench/base/error.hpp"

namespace fabench::ep {

void fail(std::string message) { throw UserError(message); }

}  // namespace fabench::ep
