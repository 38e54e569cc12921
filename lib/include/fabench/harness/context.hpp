// Context owns what one process opens once per device: the Device, its
// ProtectionDomain, the port it uses and the GID chosen there. Shared by
// every binary (pairs, worlds of N ranks).
#pragma once

#include <cstdint>
#include <memory>
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
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  // The same device, port and GID on librdmacm's own context of the device
  // (verbs/cm.hpp), with a PD of its own: what QPs connected through rdma_cm
  // (-R) and their CQs and memory must be built on. Opened on first use.
  [[nodiscard]] const Context& rdma_cm() const;

  [[nodiscard]] const verbs::Device& device() const noexcept { return device_; }
  [[nodiscard]] const verbs::ProtectionDomain& pd() const noexcept { return pd_; }
  [[nodiscard]] const verbs::Port& port() const noexcept { return port_; }
  [[nodiscard]] const verbs::DeviceAttributes& attributes() const noexcept { return attributes_; }
  [[nodiscard]] int gid_index() const noexcept { return gid_index_; }
  [[nodiscard]] std::string gid_type() const;
  [[nodiscard]] std::string gid_text() const;

 private:
  Context(const Context& like, verbs::Device device);

  verbs::Device device_;
  verbs::ProtectionDomain pd_;
  verbs::Port port_;
  verbs::DeviceAttributes attributes_;
  int gid_index_ = -1;
  mutable std::unique_ptr<Context> rdma_cm_;
};

}  // namespace fabench::harness
