// DeviceList owns the array from ibv_get_device_list; Device owns one opened
// ibv_context (ibv_open_device/ibv_close_device) and answers questions about
// it: attributes (ibv_query_device plus the port's max_msg_sz and a probed
// max_inline_data), ports, the GID table, the NUMA node from sysfs.
//
// Children (ProtectionDomain, CompletionQueue, ...) keep the raw ibv_context
// pointer, which stays put when a Device is moved, so a Device must simply be
// declared before them and outlive them.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <infiniband/verbs.h>

#include "fabench/verbs/gid.hpp"
#include "fabench/verbs/handle.hpp"
#include "fabench/verbs/port.hpp"

namespace fabench::verbs {

template <>
void HandleTraits<ibv_device*>::destroy(ibv_device** list) noexcept;
template <>
void HandleTraits<ibv_context>::destroy(ibv_context* context) noexcept;

class DeviceList {
 public:
  // Throws VerbsError (ibv_get_device_list) when libibverbs cannot list
  // devices; an empty list is not an error here (Device::open reports it).
  DeviceList();

  // The list's own entries (ibv_get_device_list ends it with a null entry), so a
  // moved-from list is empty rather than a count beside a null array.
  [[nodiscard]] std::span<ibv_device* const> devices() const noexcept { return {list_.get(), size()}; }
  [[nodiscard]] std::size_t size() const noexcept;
  [[nodiscard]] bool empty() const noexcept { return size() == 0; }
  [[nodiscard]] std::vector<std::string> names() const;
  // nullptr when no device has that name.
  [[nodiscard]] ibv_device* find(std::string_view name) const noexcept;

 private:
  Handle<ibv_device*> list_;
};

struct DeviceAttributes {
  std::string name;
  std::string fw_ver;
  std::uint64_t node_guid = 0;  // host byte order
  std::string node_guid_text;   // "b208:75ff:fe5f:b85e" as ibv_devinfo prints it
  std::uint32_t vendor_id = 0;
  std::uint32_t vendor_part_id = 0;
  int max_qp = 0;
  int max_qp_wr = 0;
  int max_sge = 0;
  int max_cq = 0;
  int max_cqe = 0;
  std::uint64_t max_mr_size = 0;
  int max_qp_rd_atom = 0;       // outstanding RDMA reads/atomics as target
  int max_qp_init_rd_atom = 0;  // ... as initiator
  ibv_atomic_cap atomic_cap = IBV_ATOMIC_NONE;
  std::string atomic_cap_name;  // "NONE", "HCA", "GLOB"
  std::uint8_t phys_port_cnt = 0;
  std::uint32_t max_msg_sz = 0;       // of the queried port
  std::uint32_t max_inline_data = 0;  // probed for RC
};

class Device {
 public:
  // name "" opens the first device with an ACTIVE port. Errors: no device at
  // all (hint: how to add Soft-RoCE), unknown name (lists the devices), no
  // device with an active port (lists the port states).
  [[nodiscard]] static Device open(std::string_view name = "");
  // Opens a device from a list entry.
  explicit Device(ibv_device* device);
  // A context opened and kept by someone else (librdmacm's, cm.hpp): queried
  // like an opened one, never closed by this object.
  [[nodiscard]] static Device borrow(ibv_context* context);

  [[nodiscard]] ibv_context* get() const noexcept { return context_.get(); }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] const ibv_device_attr& raw_attr() const noexcept { return attr_; }

  // Attributes; max_msg_sz comes from port_num, max_inline_data from probe.
  [[nodiscard]] DeviceAttributes attributes(std::uint8_t port_num = 1) const;
  [[nodiscard]] Port port(std::uint8_t port_num = 1) const;
  // Lowest-numbered ACTIVE port; nullopt when none.
  [[nodiscard]] std::optional<std::uint8_t> first_active_port() const;
  [[nodiscard]] GidTable gid_table(std::uint8_t port_num = 1, std::string_view sysfs_root = kSysfsInfiniband) const;

  // The largest max_inline_data a queue pair of this type can be created
  // with: devices do not report it, so it is probed once by creating
  // throwaway QPs (binary search over [0, 4096]) and cached.
  [[nodiscard]] std::uint32_t max_inline_data(ibv_qp_type type = IBV_QPT_RC) const;

  // NUMA node of the device's PCI function; -1 when unknown (virtual devices
  // such as rxe, or a kernel without NUMA).
  [[nodiscard]] int numa_node(std::string_view sysfs_root = kSysfsInfiniband) const;

 private:
  Device() = default;

  Handle<ibv_context> context_;  // borrowed (not closed): librdmacm's (borrow())
  std::string name_;
  ibv_device_attr attr_{};
  mutable std::optional<std::uint32_t> max_inline_rc_;
  mutable std::optional<std::uint32_t> max_inline_uc_;
  mutable std::optional<std::uint32_t> max_inline_ud_;
};

// Reads <sysfs_root>/<device>/device/numa_node; -1 if absent or unreadable.
[[nodiscard]] int numa_node_from_sysfs(std::string_view sysfs_root, std::string_view device);

// "b208:75ff:fe5f:b85e" from a host-order GUID.
[[nodiscard]] std::string format_guid(std::uint64_t guid);

[[nodiscard]] std::string atomic_cap_name(ibv_atomic_cap cap);

}  // namespace fabench::verbs
