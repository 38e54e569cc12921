// AddressHandle: ibv_create_ah / ibv_destroy_ah.
#include "fabench/verbs/ah.hpp"

#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "fabench/verbs/error.hpp"
#include "fabench/verbs/gid.hpp"
#include "fabench/verbs/pd.hpp"

namespace fabench::verbs {

ibv_ah_attr make_ah_attr(const Endpoint& remote, int sgid_index, std::uint8_t port, std::uint8_t sl,
                         std::uint8_t traffic_class, std::uint8_t hop_limit) {
  ibv_ah_attr ah{};
  ah.dlid = remote.lid;
  ah.sl = sl;
  ah.src_path_bits = 0;
  ah.port_num = port;
  if (remote.gid_index >= 0) {
    if (sgid_index < 0) {
      throw VerbsError("make_ah_attr", EINVAL,
                       "the peer uses a GID (RoCE or routed IB) but no local GID index was chosen");
    }
    ah.is_global = 1;
    std::memcpy(ah.grh.dgid.raw, remote.gid.data(), remote.gid.size());
    ah.grh.sgid_index = static_cast<std::uint8_t>(sgid_index);
    ah.grh.hop_limit = hop_limit;
    ah.grh.traffic_class = traffic_class;
    ah.grh.flow_label = 0;
  }
  return ah;
}

AddressHandle::AddressHandle(const ProtectionDomain& pd, const Endpoint& remote, int sgid_index, std::uint8_t port,
                             std::uint8_t sl, std::uint8_t traffic_class, std::uint8_t hop_limit)
    : remote_qpn_(remote.qpn), remote_qkey_(remote.qkey) {
  ibv_ah_attr attr = make_ah_attr(remote, sgid_index, port, sl, traffic_class, hop_limit);
  errno = 0;
  ah_ = Handle<ibv_ah>(ibv_create_ah(pd.get(), &attr));
  if (ah_.get() == nullptr) {
    const int err = errno != 0 ? errno : EIO;
    throw VerbsError("ibv_create_ah", err,
                     fmt::format("{} port {} to qpn {:#x} lid {} gid {} (sgid_index {}); is the peer "
                                 "reachable from this port?",
                                 pd.device_name(), port, remote.qpn, remote.lid, format_gid(remote.gid), sgid_index));
  }
}

AddressHandle::AddressHandle(const ProtectionDomain& pd, const ibv_ah_attr& attr, std::uint32_t remote_qpn,
                             std::uint32_t remote_qkey)
    : remote_qpn_(remote_qpn), remote_qkey_(remote_qkey) {
  ibv_ah_attr copy = attr;
  errno = 0;
  ah_ = Handle<ibv_ah>(ibv_create_ah(pd.get(), &copy));
  if (ah_.get() == nullptr) {
    const int err = errno != 0 ? errno : EIO;
    throw VerbsError("ibv_create_ah", err,
                     fmt::format("{} port {} to qpn {:#x} (the route rdma_cm resolved)", pd.device_name(),
                                 attr.port_num, remote_qpn));
  }
}

template <>
void HandleTraits<ibv_ah>::destroy(ibv_ah* ah) noexcept {
  if (const int rc = ibv_destroy_ah(ah); rc != 0) log_destroy_failure("ibv_destroy_ah", rc);
}

}  // namespace fabench::verbs
