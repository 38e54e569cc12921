// What a process says about itself in reports and handshakes: fabench's build version and the
// host's name. Here, below verbs and ctrl, because both the control plane's Hello and the
// harness's report context carry them.
#pragma once

#include <string>
#include <string_view>

namespace fabench {

// The fabench version this library was built from ("0.1.0").
[[nodiscard]] std::string_view build_version() noexcept;

// gethostname(), or "unknown-host".
[[nodiscard]] std::string local_host_name();

}  // namespace fabench
