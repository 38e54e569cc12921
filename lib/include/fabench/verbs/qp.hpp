// QueuePair owns one ibv_qp (ibv_create_qp / ibv_destroy_qp) of type RC, UC
// or UD and walks it through RESET -> INIT -> RTR -> RTS. local_endpoint()
// says how a peer reaches it; connect() takes the peer's Endpoint. The
// post_send/post_recv helpers are the hot path: inline, no allocation,
// logging or exceptions; they return the error number and send_error() turns
// a non-zero one into a VerbsError afterwards.
// A QueuePair must be destroyed before its CompletionQueues and its
// ProtectionDomain (declare it after them).
#pragma once

#include <cstdint>
#include <string>

#include <infiniband/verbs.h>

#include "fabench/verbs/endpoint.hpp"
#include "fabench/verbs/error.hpp"
#include "fabench/verbs/handle.hpp"

namespace fabench::verbs {

class ProtectionDomain;
class CompletionQueue;

template <>
void HandleTraits<ibv_qp>::destroy(ibv_qp* qp) noexcept;

struct QpCaps {
  std::uint32_t max_send_wr = 128;
  std::uint32_t max_recv_wr = 128;
  std::uint32_t max_send_sge = 1;
  std::uint32_t max_recv_sge = 1;
  std::uint32_t max_inline_data = 0;  // see Device::max_inline_data()
  bool sq_sig_all = false;            // false: selective signaling
};

// GID index meaning "choose": on Ethernet choose_gid()'s automatic pick, on
// InfiniBand no GRH (LID routing inside the subnet).
inline constexpr int kAutoGidIndex = -1;

struct QpConfig {
  std::uint8_t port = 1;
  int gid_index = kAutoGidIndex;
  // Path MTU in bytes; 0 = the smaller of both ports' active MTUs.
  std::uint32_t path_mtu_bytes = 0;
  // RC: 4.096 us * 2^timeout per retry (14 -> 67 ms); 7 = retry forever for rnr_retry.
  std::uint8_t timeout = 14;
  std::uint8_t retry_cnt = 7;
  std::uint8_t rnr_retry = 7;
  std::uint8_t min_rnr_timer = 12;  // 0.64 ms
  // Outstanding RDMA reads/atomics as initiator / as target; clamped to the
  // device's max_qp_init_rd_atom / max_qp_rd_atom.
  std::uint8_t max_rd_atomic = 16;
  std::uint8_t max_dest_rd_atomic = 16;
  std::uint8_t sl = 0;
  std::uint8_t traffic_class = 0;
  std::uint8_t hop_limit = 64;
  std::uint16_t pkey_index = 0;
  std::uint32_t qkey = 0x11111111;  // UD
  // What peers may do through this QP (RC: all three; UC: write only). The
  // memory regions' own flags are the real gate, so the QP admits what the
  // type supports unless narrowed here.
  unsigned remote_access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
};

// What a QP of `type` with `caps` on these CQs is created with (ibv_create_qp,
// or rdma_cm's rdma_create_qp).
[[nodiscard]] ibv_qp_init_attr qp_init_attr(const CompletionQueue& send_cq, const CompletionQueue& recv_cq,
                                            ibv_qp_type type, const QpCaps& caps) noexcept;

[[nodiscard]] std::string qp_type_name(ibv_qp_type type);     // "RC", "UC", "UD"
[[nodiscard]] std::string qp_state_name(ibv_qp_state state);  // "RESET", "RTS", ...

class QueuePair {
 public:
  QueuePair(const ProtectionDomain& pd, const CompletionQueue& send_cq, const CompletionQueue& recv_cq,
            ibv_qp_type type, const QpCaps& caps = {});
  // A QP created and owned elsewhere (rdma_cm's rdma_create_qp: CmId
  // destroys it): this object posts on it and never destroys it. Its state
  // is queried once here.
  [[nodiscard]] static QueuePair borrow(ibv_qp* qp, const ibv_qp_cap& caps);

  [[nodiscard]] ibv_qp* get() const noexcept { return qp_.get(); }
  [[nodiscard]] std::uint32_t qpn() const noexcept { return qp_.get()->qp_num; }
  [[nodiscard]] ibv_qp_type type() const noexcept { return type_; }
  // Capacities as granted by the provider (may exceed what was asked).
  [[nodiscard]] const ibv_qp_cap& caps() const noexcept { return caps_; }
  [[nodiscard]] std::uint32_t psn() const noexcept { return psn_; }
  // State after the last successful transition made through this object.
  [[nodiscard]] ibv_qp_state state() const noexcept { return state_; }
  // "RC qp 0x11 on rxe0" — for error messages.
  [[nodiscard]] std::string describe() const;

  // How a peer reaches this QP: qpn, psn, qkey (UD), lid, port, active MTU,
  // and the GID chosen by cfg (gid_index -1 on IB without GRH).
  [[nodiscard]] Endpoint local_endpoint(const QpConfig& cfg) const;
  // The GID index cfg resolves to on this QP's device (-1: none).
  [[nodiscard]] int resolve_gid_index(const QpConfig& cfg) const;

  void to_init(const QpConfig& cfg);
  // RC/UC need the remote; UD ignores it.
  void to_rtr(const Endpoint& remote, const QpConfig& cfg);
  void to_rts(const QpConfig& cfg);
  // RC/UC: (INIT if still RESET) -> RTR -> RTS toward remote.
  // UD: INIT -> RTR -> RTS; remote is not used (each send names its AH).
  void connect(const Endpoint& remote, const QpConfig& cfg);
  // UD only: INIT -> RTR -> RTS.
  void activate(const QpConfig& cfg);

  // --- data path -----------------------------------------------------------
  [[nodiscard]] int post_send(ibv_send_wr& wr) const noexcept {
    ibv_send_wr* bad = nullptr;
    return ibv_post_send(qp_.get(), &wr, &bad);
  }
  [[nodiscard]] int post_send(ibv_send_wr& wr, ibv_send_wr*& bad) const noexcept {
    return ibv_post_send(qp_.get(), &wr, &bad);
  }
  [[nodiscard]] int post_recv(ibv_recv_wr& wr) const noexcept {
    ibv_recv_wr* bad = nullptr;
    return ibv_post_recv(qp_.get(), &wr, &bad);
  }
  [[nodiscard]] int post_recv(ibv_recv_wr& wr, ibv_recv_wr*& bad) const noexcept {
    return ibv_post_recv(qp_.get(), &wr, &bad);
  }

  // A VerbsError for a non-zero post_send() rc, with a hint: an opcode the QP
  // type lacks (atomics/reads on UC, ...), a full send queue, inline data
  // beyond the QP's max_inline_data, too many SGEs.
  [[nodiscard]] VerbsError send_error(int rc, const ibv_send_wr& wr) const;
  [[nodiscard]] VerbsError recv_error(int rc, const ibv_recv_wr& wr) const;

 private:
  QueuePair() = default;
  void modify(ibv_qp_attr& attr, int mask, ibv_qp_state target, const std::string& detail);

  Handle<ibv_qp> qp_;  // borrowed (not destroyed) for rdma_cm's QPs
  ibv_qp_type type_ = IBV_QPT_RC;
  ibv_qp_cap caps_{};
  std::uint32_t psn_ = 0;
  ibv_qp_state state_ = IBV_QPS_RESET;
};

// Whether a QP type can carry a send opcode (RC: all; UC: write, write-imm,
// send, send-imm; UD: send, send-imm).
[[nodiscard]] bool qp_type_supports(ibv_qp_type type, ibv_wr_opcode opcode) noexcept;

}  // namespace fabench::verbs
