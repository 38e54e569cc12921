#include "fabench/ep/error.hpp"

#include "fabench/kv/error.hpp"

namespace fabench::ep {

void fail(std::string message) { throw kv::KvError(message); }

}  // namespace fabench::ep
