// Context owns what one process opens once per device: the Device, its
// ProtectionDomain, the port it uses and the GID chosen there. Shared by
// every binary (pairs, worlds of N ranks).
#pragma once

#include <cstdint>
#include <string>

#include "fabench/verbs/device.hpp"
#include "fabench/verbs/pd.hpp"
#include "fabench/verbs/port.hpp"

namespace fabench::harness {

struct ContextOptions {
  std::string device;        // "" = first device with an ACTIVE port
  std::uint8_t ib_port = 0;  // 0 = first ACTIVE port
  int gid_index = -1;        // -1 = automatic (RoCE v2 over IPv4 first)
  bool ipv6_gid = false;     // automatic: a RoCE v2 GID over IPv6 instead (perftest's --ipv6)
};

class Context {
 public:
  explicit Context(const ContextOptions& options);

  [[nodiscard]] const verbs::Device& device() const noexcept { return device_; }
  [[nodiscard]] const verbs::ProtectionDomain& pd() const noexcept { return pd_; }
  [[nodiscard]] const verbs::Port& port() const noexcept { return port_; }
  [[nodiscard]] const verbs::DeviceAttributes& attributes() const noexcept { return attributes_; }
  [[nodiscard]] int gid_index() const noexcept { return gid_index_; }
  [[nodiscard]] std::string gid_type() const;
  [[nodiscard]] std::string gid_text() const;

 private:
  verbs::Device device_;
  verbs::ProtectionDomain pd_;
  verbs::Port port_;
  verbs::DeviceAttributes attributes_;
  int gid_index_ = -1;
};

}  // namespace fabench::harness
