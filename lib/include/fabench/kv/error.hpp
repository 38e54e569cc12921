// KvError: the name lib/kv throws fabench::UserError by (base/error.hpp), for what a user can get
// wrong: a model name, a config.json, a dtype, a link rate, a transfer shape that does not fit the
// model. what() is one line, ready to print.
#pragma once

#include "fabench/base/error.hpp"

namespace fabench::kv {

using KvError = fabench::UserError;

}  // namespace fabench::kv
