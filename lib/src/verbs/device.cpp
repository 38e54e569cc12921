// DeviceList and Device: ibv_get_device_list / ibv_open_device and queries.
#include "fabench/verbs/device.hpp"

#include <endian.h>

#include <cerrno>
#include <fstream>
#include <memory>
#include <utility>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "fabench/verbs/cq.hpp"
#include "fabench/verbs/error.hpp"
#include "fabench/verbs/pd.hpp"

namespace fabench::verbs {

// ---------------------------------------------------------------- DeviceList

DeviceList::DeviceList() {
  list_ = Handle<ibv_device*>(
      check_ptr(ibv_get_device_list(nullptr), "ibv_get_device_list", "is the ib_uverbs kernel module loaded?"));
}

std::size_t DeviceList::size() const noexcept {
  std::size_t n = 0;
  if (list_.get() != nullptr) {
    while (list_.get()[n] != nullptr) ++n;
  }
  return n;
}

std::vector<std::string> DeviceList::names() const {
  std::vector<std::string> out;
  for (ibv_device* d : devices()) out.emplace_back(ibv_get_device_name(d));
  return out;
}

ibv_device* DeviceList::find(std::string_view name) const noexcept {
  for (ibv_device* d : devices()) {
    if (name == ibv_get_device_name(d)) return d;
  }
  return nullptr;
}

// -------------------------------------------------------------------- Device

Device::Device(ibv_device* device) {
  name_ = ibv_get_device_name(device);
  context_ = Handle<ibv_context>(check_ptr(ibv_open_device(device), "ibv_open_device", name_));
  check_rc(ibv_query_device(context_.get(), &attr_), "ibv_query_device", name_);
}

Device Device::borrow(ibv_context* context) {
  Device d;
  d.name_ = ibv_get_device_name(context->device);
  d.context_ = Handle<ibv_context>(context, false);
  check_rc(ibv_query_device(context, &d.attr_), "ibv_query_device", d.name_);
  return d;
}

Device Device::open(std::string_view name) {
  // Opened contexts stay valid after the list is freed (ibv_free_device_list(3)).
  DeviceList list;
  if (list.empty()) throw VerbsError("ibv_get_device_list", ENODEV, no_device_hint());
  if (!name.empty()) {
    ibv_device* d = list.find(name);
    if (d == nullptr) {
      throw VerbsError("ibv_open_device", ENODEV,
                       fmt::format("no RDMA device named '{}'; available: {}", name, fmt::join(list.names(), ", ")));
    }
    return Device(d);
  }
  std::vector<std::string> states;
  for (ibv_device* d : list.devices()) {
    Device dev(d);
    for (std::uint8_t p = 1; p <= dev.attr_.phys_port_cnt; ++p) {
      const Port port = dev.port(p);
      if (port.is_active()) return dev;
      states.push_back(fmt::format("{} port {} {}", dev.name(), p, port.state_name));
    }
  }
  throw VerbsError("ibv_query_port", ENETDOWN,
                   fmt::format("no RDMA device with an ACTIVE port ({}); is the link up?", fmt::join(states, ", ")));
}

Port Device::port(std::uint8_t port_num) const { return query_port(context_.get(), port_num); }

std::optional<std::uint8_t> Device::first_active_port() const {
  for (std::uint8_t p = 1; p <= attr_.phys_port_cnt; ++p) {
    if (port(p).is_active()) return p;
  }
  return std::nullopt;
}

GidTable Device::gid_table(std::uint8_t port_num, std::string_view sysfs_root) const {
  return load_gid_table(context_.get(), port_num, sysfs_root);
}

std::string format_guid(std::uint64_t guid) {
  return fmt::format("{:04x}:{:04x}:{:04x}:{:04x}", (guid >> 48) & 0xffff, (guid >> 32) & 0xffff, (guid >> 16) & 0xffff,
                     guid & 0xffff);
}

std::string atomic_cap_name(ibv_atomic_cap cap) {
  switch (cap) {
    case IBV_ATOMIC_NONE: return "NONE";
    case IBV_ATOMIC_HCA: return "HCA";
    case IBV_ATOMIC_GLOB: return "GLOB";
  }
  return fmt::format("atomic cap {}", static_cast<int>(cap));
}

DeviceAttributes Device::attributes(std::uint8_t port_num) const {
  DeviceAttributes a;
  a.name = name_;
  a.fw_ver = attr_.fw_ver;
  a.node_guid = be64toh(attr_.node_guid);
  a.node_guid_text = format_guid(a.node_guid);
  a.vendor_id = attr_.vendor_id;
  a.vendor_part_id = attr_.vendor_part_id;
  a.max_qp = attr_.max_qp;
  a.max_qp_wr = attr_.max_qp_wr;
  a.max_sge = attr_.max_sge;
  a.max_cq = attr_.max_cq;
  a.max_cqe = attr_.max_cqe;
  a.max_mr_size = attr_.max_mr_size;
  a.max_qp_rd_atom = attr_.max_qp_rd_atom;
  a.max_qp_init_rd_atom = attr_.max_qp_init_rd_atom;
  a.atomic_cap = attr_.atomic_cap;
  a.atomic_cap_name = atomic_cap_name(attr_.atomic_cap);
  a.phys_port_cnt = attr_.phys_port_cnt;
  a.max_msg_sz = port(port_num).max_msg_sz;
  a.max_inline_data = max_inline_data(IBV_QPT_RC);
  return a;
}

namespace {

// Creates and destroys one QP; returns the max_inline_data the provider
// granted (providers round up and write the result back into cap), or
// nullopt when creation fails with this request.
std::optional<std::uint32_t> try_inline(ibv_pd* pd, ibv_cq* cq, ibv_qp_type type, std::uint32_t inline_bytes) {
  ibv_qp_init_attr init{};
  init.send_cq = cq;
  init.recv_cq = cq;
  init.qp_type = type;
  init.cap.max_send_wr = 1;
  init.cap.max_recv_wr = 1;
  init.cap.max_send_sge = 1;
  init.cap.max_recv_sge = 1;
  init.cap.max_inline_data = inline_bytes;
  ibv_qp* qp = ibv_create_qp(pd, &init);
  if (qp == nullptr) return std::nullopt;
  const std::uint32_t granted = init.cap.max_inline_data;
  if (const int rc = ibv_destroy_qp(qp); rc != 0) {
    spdlog::warn("ibv_destroy_qp (inline probe) failed: {}", error_text(rc < 0 ? -rc : rc));
  }
  return granted < inline_bytes ? inline_bytes : granted;
}

}  // namespace

std::uint32_t Device::max_inline_data(ibv_qp_type type) const {
  std::optional<std::uint32_t>* cache = &max_inline_rc_;
  if (type == IBV_QPT_UC) cache = &max_inline_uc_;
  if (type == IBV_QPT_UD) cache = &max_inline_ud_;
  if (*cache) return **cache;

  const Handle<ibv_pd> pd(check_ptr(ibv_alloc_pd(context_.get()), "ibv_alloc_pd", "max_inline_data probe"));
  const Handle<ibv_cq> cq(
      check_ptr(ibv_create_cq(context_.get(), 2, nullptr, nullptr, 0), "ibv_create_cq", "max_inline_data probe"));

  errno = 0;
  auto base = try_inline(pd.get(), cq.get(), type, 0);
  if (!base) {
    const int err = errno != 0 ? errno : EOPNOTSUPP;
    throw VerbsError("ibv_create_qp", err, fmt::format("{} cannot create this QP type (max_inline_data probe)", name_));
  }
  // Invariant: lo is granted, hi is refused (or the upper bound of the search).
  constexpr std::uint32_t kUpper = 4096;
  std::uint32_t lo = *base;
  if (auto top = try_inline(pd.get(), cq.get(), type, kUpper)) {
    lo = *top;
  } else {
    std::uint32_t hi = kUpper;
    while (hi - lo > 1) {
      const std::uint32_t mid = lo + (hi - lo) / 2;
      if (auto got = try_inline(pd.get(), cq.get(), type, mid)) {
        lo = *got >= hi ? mid : *got;
      } else {
        hi = mid;
      }
    }
  }
  *cache = lo;
  return lo;
}

int numa_node_from_sysfs(std::string_view sysfs_root, std::string_view device) {
  std::ifstream in(fmt::format("{}/{}/device/numa_node", sysfs_root, device));
  int node = -1;
  if (!(in >> node)) return -1;
  return node < 0 ? -1 : node;
}

int Device::numa_node(std::string_view sysfs_root) const { return numa_node_from_sysfs(sysfs_root, name_); }

template <>
void HandleTraits<ibv_device*>::destroy(ibv_device** list) noexcept {
  ibv_free_device_list(list);
}

template <>
void HandleTraits<ibv_context>::destroy(ibv_context* context) noexcept {
  // EBUSY here means a child (PD, CQ, ...) outlived its device.
  if (const int rc = ibv_close_device(context); rc != 0) {
    log_destroy_failure("ibv_close_device", rc, ibv_get_device_name(context->device));
  }
}

}  // namespace fabench::verbs
