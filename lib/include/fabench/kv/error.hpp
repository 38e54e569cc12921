// KvError: the one exception lib/kv throws for what a user can get wrong (a model name, a
// config.json, a dtype, a link rate, a transfer shape that does not fit the model). what() is
// one line, ready to print as it is.
#pragma once

#include <stdexcept>

namespace fabench::kv {

class KvError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace fabench::kv
