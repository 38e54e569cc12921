// AddressHandle owns one ibv_ah (ibv_create_ah / ibv_destroy_ah): the route
// to a remote UD queue pair, built from the peer's Endpoint. make_ah_attr()
// is the same address vector a connected QP uses in its RTR transition.
#pragma once

#include <cstdint>

#include <infiniband/verbs.h>

#include "fabench/verbs/endpoint.hpp"
#include "fabench/verbs/handle.hpp"

namespace fabench::verbs {

class ProtectionDomain;

template <>
void HandleTraits<ibv_ah>::destroy(ibv_ah* ah) noexcept;

// Address vector to `remote`. A GRH (is_global) is added when the remote has
// a GID (remote.gid_index >= 0) — always on RoCE, where the GID is the
// address — using our sgid_index as source; sgid_index < 0 then throws.
[[nodiscard]] ibv_ah_attr make_ah_attr(const Endpoint& remote, int sgid_index, std::uint8_t port, std::uint8_t sl = 0,
                                       std::uint8_t traffic_class = 0, std::uint8_t hop_limit = 64);

class AddressHandle {
 public:
  AddressHandle(const ProtectionDomain& pd, const Endpoint& remote, int sgid_index, std::uint8_t port,
                std::uint8_t sl = 0, std::uint8_t traffic_class = 0, std::uint8_t hop_limit = 64);
  // From an address vector someone else resolved (rdma_cm's UD route).
  AddressHandle(const ProtectionDomain& pd, const ibv_ah_attr& attr, std::uint32_t remote_qpn,
                std::uint32_t remote_qkey);

  [[nodiscard]] ibv_ah* get() const noexcept { return ah_.get(); }
  [[nodiscard]] std::uint32_t remote_qpn() const noexcept { return remote_qpn_; }
  [[nodiscard]] std::uint32_t remote_qkey() const noexcept { return remote_qkey_; }

  // Points a UD send WR at this address.
  void address(ibv_send_wr& wr) const noexcept {
    wr.wr.ud.ah = ah_.get();
    wr.wr.ud.remote_qpn = remote_qpn_;
    wr.wr.ud.remote_qkey = remote_qkey_;
  }

 private:
  Handle<ibv_ah> ah_;
  std::uint32_t remote_qpn_ = 0;
  std::uint32_t remote_qkey_ = 0;
};

}  // namespace fabench::verbs
