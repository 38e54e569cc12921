#include "fabench/base/build_info.hpp"

#include <unistd.h>

#include <array>

#ifndef FABENCH_VERSION
#define FABENCH_VERSION "unknown"
#endif

namespace fabench {

std::string_view build_version() noexcept { return FABENCH_VERSION; }

std::string local_host_name() {
  std::array<char, 256> buf{};
  if (::gethostname(buf.data(), buf.size() - 1) != 0 || buf[0] == '\0') return "unknown-host";
  return buf.data();
}

}  // namespace fabench
