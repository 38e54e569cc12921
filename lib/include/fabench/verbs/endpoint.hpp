// verbs::Endpoint: the plain Endpoint of lib/base (base/endpoint.hpp) under the name the verbs
// objects (QueuePair::connect, MemoryRegion::endpoint) and their callers use.
#pragma once

#include "fabench/base/endpoint.hpp"

namespace fabench::verbs {

using Endpoint = fabench::Endpoint;

}  // namespace fabench::verbs
