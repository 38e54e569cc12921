// QueuePair: creation, state transitions, endpoints, post error texts.
#include "fabench/verbs/qp.hpp"

#include <algorithm>
#include <cerrno>
#include <random>
#include <utility>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "fabench/verbs/ah.hpp"
#include "fabench/verbs/cq.hpp"
#include "fabench/verbs/gid.hpp"
#include "fabench/verbs/pd.hpp"
#include "fabench/verbs/port.hpp"

namespace fabench::verbs {

std::string qp_type_name(ibv_qp_type type) {
  switch (type) {
    case IBV_QPT_RC: return "RC";
    case IBV_QPT_UC: return "UC";
    case IBV_QPT_UD: return "UD";
    case IBV_QPT_RAW_PACKET: return "RAW_PACKET";
    case IBV_QPT_XRC_SEND: return "XRC_SEND";
    case IBV_QPT_XRC_RECV: return "XRC_RECV";
    case IBV_QPT_DRIVER: return "DRIVER";
  }
  return fmt::format("qp type {}", static_cast<int>(type));
}

std::string qp_state_name(ibv_qp_state state) {
  switch (state) {
    case IBV_QPS_RESET: return "RESET";
    case IBV_QPS_INIT: return "INIT";
    case IBV_QPS_RTR: return "RTR";
    case IBV_QPS_RTS: return "RTS";
    case IBV_QPS_SQD: return "SQD";
    case IBV_QPS_SQE: return "SQE";
    case IBV_QPS_ERR: return "ERR";
    case IBV_QPS_UNKNOWN: return "UNKNOWN";
  }
  return fmt::format("qp state {}", static_cast<int>(state));
}

bool qp_type_supports(ibv_qp_type type, ibv_wr_opcode opcode) noexcept {
  const bool send = opcode == IBV_WR_SEND || opcode == IBV_WR_SEND_WITH_IMM;
  const bool write = opcode == IBV_WR_RDMA_WRITE || opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
  switch (type) {
    case IBV_QPT_RC: return true;
    case IBV_QPT_UC: return send || write;
    case IBV_QPT_UD: return send;
    default: return true;  // not ours to judge
  }
}

ibv_qp_init_attr qp_init_attr(const CompletionQueue& send_cq, const CompletionQueue& recv_cq, ibv_qp_type type,
                              const QpCaps& caps) noexcept {
  ibv_qp_init_attr init{};
  init.send_cq = send_cq.get();
  init.recv_cq = recv_cq.get();
  init.qp_type = type;
  init.sq_sig_all = caps.sq_sig_all ? 1 : 0;
  init.cap.max_send_wr = caps.max_send_wr;
  init.cap.max_recv_wr = caps.max_recv_wr;
  init.cap.max_send_sge = caps.max_send_sge;
  init.cap.max_recv_sge = caps.max_recv_sge;
  init.cap.max_inline_data = caps.max_inline_data;
  return init;
}

QueuePair::QueuePair(const ProtectionDomain& pd, const CompletionQueue& send_cq, const CompletionQueue& recv_cq,
                     ibv_qp_type type, const QpCaps& caps)
    : type_(type) {
  ibv_qp_init_attr init = qp_init_attr(send_cq, recv_cq, type, caps);
  errno = 0;
  qp_ = Handle<ibv_qp>(ibv_create_qp(pd.get(), &init));
  if (qp_.get() == nullptr) {
    const int err = errno != 0 ? errno : EIO;
    ibv_device_attr dev{};
    const bool have_dev = ibv_query_device(pd.context(), &dev) == 0;
    std::string hint;
    if (err == EOPNOTSUPP || err == EPROTONOSUPPORT) {
      hint = fmt::format("{} does not support {} queue pairs", pd.device_name(), qp_type_name(type));
    } else {
      hint = fmt::format(
          "{} {} QP with max_send_wr {}, max_recv_wr {}, max_send_sge {}, max_recv_sge {}, "
          "max_inline_data {}",
          pd.device_name(), qp_type_name(type), caps.max_send_wr, caps.max_recv_wr, caps.max_send_sge,
          caps.max_recv_sge, caps.max_inline_data);
      if (have_dev) {
        hint += fmt::format(
            "; device limits max_qp_wr {}, max_sge {} (max_inline_data: see "
            "Device::max_inline_data)",
            dev.max_qp_wr, dev.max_sge);
      }
      if (err == EINVAL) hint += fmt::format("; or {} QPs are unsupported", qp_type_name(type));
    }
    throw VerbsError("ibv_create_qp", err, std::move(hint));
  }
  caps_ = init.cap;  // the provider writes back what it granted
  // A random initial PSN, as the spec recommends, so stale packets of an
  // earlier QP with the same number are not taken for ours.
  std::random_device rd;
  psn_ = rd() & 0xffffffU;
}

QueuePair QueuePair::borrow(ibv_qp* qp, const ibv_qp_cap& caps) {
  QueuePair out;
  out.qp_ = Handle<ibv_qp>(qp, false);
  out.type_ = qp->qp_type;
  out.caps_ = caps;
  ibv_qp_attr attr{};
  ibv_qp_init_attr init{};
  if (ibv_query_qp(qp, &attr, IBV_QP_STATE, &init) == 0) out.state_ = attr.qp_state;
  return out;
}

template <>
void HandleTraits<ibv_qp>::destroy(ibv_qp* qp) noexcept {
  const std::uint32_t qpn = qp->qp_num;
  if (const int rc = ibv_destroy_qp(qp); rc != 0) log_destroy_failure("ibv_destroy_qp", rc, fmt::format("{:#x}", qpn));
}

std::string QueuePair::describe() const {
  if (qp_.get() == nullptr) return fmt::format("{} qp (none)", qp_type_name(type_));
  return fmt::format("{} qp {:#x} on {}", qp_type_name(type_), qp_.get()->qp_num,
                     ibv_get_device_name(qp_.get()->context->device));
}

int QueuePair::resolve_gid_index(const QpConfig& cfg) const {
  const Port port = query_port(qp_.get()->context, cfg.port);
  if (!port.is_ethernet() && cfg.gid_index < 0) return -1;  // IB: LID routing
  const GidTable table = load_gid_table(qp_.get()->context, cfg.port);
  return choose_gid(table, port.link_layer, cfg.gid_index).index;
}

Endpoint QueuePair::local_endpoint(const QpConfig& cfg) const {
  const Port port = query_port(qp_.get()->context, cfg.port);
  Endpoint ep;
  ep.qpn = qp_.get()->qp_num;
  ep.psn = psn_;
  ep.qkey = type_ == IBV_QPT_UD ? cfg.qkey : 0;
  ep.lid = port.lid;
  ep.port = cfg.port;
  ep.mtu = static_cast<std::uint8_t>(port.active_mtu);
  ep.gid_index = resolve_gid_index(cfg);
  if (ep.gid_index >= 0) {
    // ibv_query_gid reads the same table the kernel uses for this port.
    ibv_gid gid{};
    check_rc(
        ibv_query_gid(qp_.get()->context, cfg.port, ep.gid_index, &gid), "ibv_query_gid",
        fmt::format("{} port {} index {}", ibv_get_device_name(qp_.get()->context->device), cfg.port, ep.gid_index));
    std::copy(std::begin(gid.raw), std::end(gid.raw), ep.gid.begin());
  }
  return ep;
}

void QueuePair::modify(ibv_qp_attr& attr, int mask, ibv_qp_state target, const std::string& detail) {
  attr.qp_state = target;
  const int rc = ibv_modify_qp(qp_.get(), &attr, mask | IBV_QP_STATE);
  if (rc != 0) {
    throw VerbsError("ibv_modify_qp", rc,
                     fmt::format("{} {} -> {}{}{}", describe(), qp_state_name(state_), qp_state_name(target),
                                 detail.empty() ? "" : ": ", detail));
  }
  state_ = target;
}

void QueuePair::to_init(const QpConfig& cfg) {
  ibv_qp_attr attr{};
  attr.pkey_index = cfg.pkey_index;
  attr.port_num = cfg.port;
  int mask = IBV_QP_PKEY_INDEX | IBV_QP_PORT;
  if (type_ == IBV_QPT_UD) {
    attr.qkey = cfg.qkey;
    mask |= IBV_QP_QKEY;
  } else {
    unsigned access = cfg.remote_access;
    // UC has no responder for reads or atomics.
    if (type_ == IBV_QPT_UC) access &= IBV_ACCESS_REMOTE_WRITE;
    attr.qp_access_flags = access;
    mask |= IBV_QP_ACCESS_FLAGS;
  }
  modify(attr, mask, IBV_QPS_INIT, fmt::format("port {}, pkey_index {}", cfg.port, cfg.pkey_index));
}

void QueuePair::to_rtr(const Endpoint& remote, const QpConfig& cfg) {
  ibv_qp_attr attr{};
  if (type_ == IBV_QPT_UD) {
    modify(attr, 0, IBV_QPS_RTR, {});
    return;
  }
  const Port port = query_port(qp_.get()->context, cfg.port);
  std::uint32_t mtu = port.active_mtu_bytes;
  if (remote.mtu != 0) mtu = std::min(mtu, mtu_bytes(static_cast<ibv_mtu>(remote.mtu)));
  if (cfg.path_mtu_bytes != 0) mtu = std::min(mtu, cfg.path_mtu_bytes);
  attr.path_mtu = mtu_from_bytes(mtu);
  attr.dest_qp_num = remote.qpn;
  attr.rq_psn = remote.psn;
  int sgid = -1;
  if (remote.gid_index >= 0) {
    sgid = resolve_gid_index(cfg);
    if (sgid < 0) {  // IB peer that insists on a GRH: use our GID 0
      QpConfig with_gid = cfg;
      with_gid.gid_index = 0;
      sgid = resolve_gid_index(with_gid);
    }
  }
  attr.ah_attr = make_ah_attr(remote, sgid, cfg.port, cfg.sl, cfg.traffic_class, cfg.hop_limit);
  int mask = IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
  if (type_ == IBV_QPT_RC) {
    ibv_device_attr dev{};
    check_rc(ibv_query_device(qp_.get()->context, &dev), "ibv_query_device");
    attr.max_dest_rd_atomic = static_cast<std::uint8_t>(std::min<int>(cfg.max_dest_rd_atomic, dev.max_qp_rd_atom));
    attr.min_rnr_timer = cfg.min_rnr_timer;
    mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
  }
  modify(attr, mask, IBV_QPS_RTR,
         fmt::format("remote qpn {:#x} psn {:#x} lid {} gid {} (gid_index {}), sgid_index {}, "
                     "path_mtu {}",
                     remote.qpn, remote.psn, remote.lid, format_gid(remote.gid), remote.gid_index, sgid,
                     mtu_bytes(attr.path_mtu)));
}

void QueuePair::to_rts(const QpConfig& cfg) {
  ibv_qp_attr attr{};
  attr.sq_psn = psn_;
  int mask = IBV_QP_SQ_PSN;
  if (type_ == IBV_QPT_RC) {
    ibv_device_attr dev{};
    check_rc(ibv_query_device(qp_.get()->context, &dev), "ibv_query_device");
    attr.timeout = cfg.timeout;
    attr.retry_cnt = cfg.retry_cnt;
    attr.rnr_retry = cfg.rnr_retry;
    attr.max_rd_atomic = static_cast<std::uint8_t>(std::min<int>(cfg.max_rd_atomic, dev.max_qp_init_rd_atom));
    mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
  }
  modify(attr, mask, IBV_QPS_RTS, fmt::format("sq_psn {:#x}", psn_));
}

void QueuePair::connect(const Endpoint& remote, const QpConfig& cfg) {
  if (type_ == IBV_QPT_UD) {
    activate(cfg);
    return;
  }
  if (state_ == IBV_QPS_RESET) to_init(cfg);
  to_rtr(remote, cfg);
  to_rts(cfg);
}

void QueuePair::activate(const QpConfig& cfg) {
  if (type_ != IBV_QPT_UD) {
    throw VerbsError("ibv_modify_qp", EINVAL,
                     fmt::format("{}: connected QPs need the peer's Endpoint (use connect)", describe()));
  }
  if (state_ == IBV_QPS_RESET) to_init(cfg);
  to_rtr(Endpoint{}, cfg);
  to_rts(cfg);
}

VerbsError QueuePair::send_error(int rc, const ibv_send_wr& wr) const {
  const int err = rc < 0 ? -rc : rc;
  std::string hint;
  if (!qp_type_supports(type_, wr.opcode)) {
    hint = fmt::format("{} is not supported on {}", wr_opcode_name(wr.opcode), describe());
  } else if (err == ENOMEM) {
    hint = fmt::format("send queue of {} is full (max_send_wr {}); poll completions first", describe(),
                       caps_.max_send_wr);
  } else if ((wr.send_flags & IBV_SEND_INLINE) != 0) {
    hint = fmt::format("inline {} on {} (max_inline_data {})", wr_opcode_name(wr.opcode), describe(),
                       caps_.max_inline_data);
  } else if (wr.num_sge > static_cast<int>(caps_.max_send_sge)) {
    hint = fmt::format("{} SGEs on {} (max_send_sge {})", wr.num_sge, describe(), caps_.max_send_sge);
  } else if (state_ != IBV_QPS_RTS) {
    hint = fmt::format("{} is in state {}, not RTS", describe(), qp_state_name(state_));
  } else {
    hint = fmt::format("{} wr_id {:#x} on {}", wr_opcode_name(wr.opcode), wr.wr_id, describe());
  }
  return VerbsError("ibv_post_send", err, std::move(hint));
}

VerbsError QueuePair::recv_error(int rc, const ibv_recv_wr& wr) const {
  const int err = rc < 0 ? -rc : rc;
  std::string hint;
  if (err == ENOMEM) {
    hint = fmt::format("receive queue of {} is full (max_recv_wr {})", describe(), caps_.max_recv_wr);
  } else if (wr.num_sge > static_cast<int>(caps_.max_recv_sge)) {
    hint = fmt::format("{} SGEs on {} (max_recv_sge {})", wr.num_sge, describe(), caps_.max_recv_sge);
  } else {
    hint = fmt::format("wr_id {:#x} on {}", wr.wr_id, describe());
  }
  return VerbsError("ibv_post_recv", err, std::move(hint));
}

}  // namespace fabench::verbs
