#include "fabench/pair/side.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "fabench/base/error.hpp"
#include "fabench/ctrl/heartbeat.hpp"
#include "fabench/harness/cli.hpp"

#include "fabench/verbs/error.hpp"
#include "fabench/verbs/gid.hpp"

namespace fabench::pair {

std::optional<UserError> check_device_limits(const harness::Context& ctx, const TestSpec& spec) {
  const auto& a = ctx.attributes();
  const auto& port = ctx.port();
  if (const auto bad = validate(spec); !bad.empty()) return UserError(bad);
  if (spec.msg_bytes > port.max_msg_sz) {
    return UserError(fmt::format("message size {} B exceeds {} port {}'s max_msg_sz {} B", spec.msg_bytes,
                                 ctx.device().name(), port.port_num, port.max_msg_sz));
  }
  const std::uint32_t mtu = spec.mtu_bytes != 0 ? std::min(spec.mtu_bytes, port.active_mtu_bytes)
                                                : port.active_mtu_bytes;
  if (spec.transport == IBV_QPT_UD && spec.msg_bytes > mtu) {
    return UserError(
        fmt::format("UD messages must fit in one MTU: {} B > {} B on {}", spec.msg_bytes, mtu, ctx.device().name()));
  }
  if (is_atomic(spec.op) && a.atomic_cap == IBV_ATOMIC_NONE) {
    return UserError(fmt::format("{} does not support atomics (atomic_cap NONE)", ctx.device().name()));
  }
  if (spec.tx_depth > static_cast<std::uint32_t>(a.max_qp_wr) ||
      spec.rx_depth > static_cast<std::uint32_t>(a.max_qp_wr)) {
    return UserError(fmt::format("queue depth (-t {} / rx {}) exceeds {}'s max_qp_wr {}", spec.tx_depth, spec.rx_depth,
                                 ctx.device().name(), a.max_qp_wr));
  }
  if (spec.inline_bytes > 0 &&
      static_cast<std::uint32_t>(spec.inline_bytes) > ctx.device().max_inline_data(spec.transport)) {
    return UserError(fmt::format("-I {} exceeds {}'s max inline data {} B for {}", spec.inline_bytes,
                                 ctx.device().name(), ctx.device().max_inline_data(spec.transport),
                                 transport_name(spec.transport)));
  }
  return harness::check_path_mtu("-m", spec.mtu_bytes);
}

namespace {
verbs::QpConfig make_config(const harness::Context& ctx, const TestSpec& spec, const SideOptions& options) {
  verbs::QpConfig cfg;
  cfg.timeout = static_cast<std::uint8_t>(options.qp_timeout);
  cfg.hop_limit = static_cast<std::uint8_t>(options.hop_limit);
  cfg.pkey_index = static_cast<std::uint16_t>(options.pkey_index);
  cfg.max_rd_atomic = static_cast<std::uint8_t>(options.max_rd_atomic);
  cfg.port = ctx.port().port_num;
  cfg.gid_index = ctx.gid_index();
  cfg.path_mtu_bytes = spec.mtu_bytes;
  cfg.sl = spec.sl;
  cfg.traffic_class = spec.traffic_class;
  cfg.remote_access = static_cast<unsigned>(spec.remote_access());
  return cfg;
}

int cq_entries(const TestSpec& spec, bool send) {
  const std::uint64_t per_qp = send ? spec.tx_depth : spec.rx_depth;
  return static_cast<int>(std::max<std::uint64_t>(per_qp * spec.qps, 16));
}

int mr_access(const TestSpec& spec) { return IBV_ACCESS_LOCAL_WRITE | spec.remote_access(); }
}  // namespace

Side::Side(const harness::Context& ctx, const TestSpec& spec, const SideOptions& options)
    : ctx_(ctx),
      spec_(spec),
      options_(options),
      cfg_(make_config(ctx, spec, options)),
      send_cq_(ctx.device(), cq_entries(spec, true), spec.events, options.comp_vector),
      recv_cq_(ctx.device(), cq_entries(spec, false), spec.events, options.comp_vector),
      buffer_(spec.buffer_bytes(), options.huge_pages ? verbs::HugePages::kRequire : verbs::HugePages::kNo) {
  if (options.mr_per_qp && spec.qps > 1) {
    mrs_.reserve(spec.qps);
    for (std::uint32_t q = 0; q < spec.qps; ++q) {
      mrs_.emplace_back(ctx.pd(), region(q), spec.region_bytes(), mr_access(spec));
    }
  } else {
    mrs_.emplace_back(ctx.pd(), buffer_, mr_access(spec));
  }
  const std::uint32_t dev_inline = ctx.device().max_inline_data(spec.transport);
  // Inline (the CPU copies the payload into the WQE) saves the NIC a DMA
  // read for small messages; -I sets the threshold, default the device max
  // capped where copying stops paying (perftest's default is 220 B).
  const std::uint32_t want_inline = spec.inline_bytes >= 0 ? static_cast<std::uint32_t>(spec.inline_bytes)
                                                           : std::min<std::uint32_t>(dev_inline, 220);
  inline_threshold_ = std::min(want_inline, dev_inline);
  caps_.max_send_wr = spec.tx_depth;
  caps_.max_recv_wr = (spec.op == Op::kSend) ? spec.rx_depth : 1;
  caps_.max_inline_data = inline_threshold_;
  run_state_.rx_posted.assign(spec.qps, 0);
  if (spec.rdma_cm) return;  // rdma_cm creates them on its ids: adopt_cm()
  qps_.reserve(spec.qps);
  for (std::uint32_t q = 0; q < spec.qps; ++q) {
    qps_.emplace_back(ctx.pd(), send_cq_, recv_cq_, spec.transport, caps_);
    qps_.back().to_init(cfg_);
  }
}

ibv_qp_init_attr Side::cm_qp_attr() const noexcept {
  return verbs::qp_init_attr(send_cq_, recv_cq_, spec_.transport, caps_);
}

void Side::adopt_cm(CmConnection cm) {
  if (!spec_.rdma_cm || !qps_.empty() || cm.ids.size() != spec_.qps || cm.caps.size() != spec_.qps) {
    throw RunError("Side::adopt_cm: not an rdma_cm Side awaiting its queue pairs");
  }
  cm_ = std::move(cm);
  qps_.reserve(spec_.qps);
  for (std::uint32_t q = 0; q < spec_.qps; ++q) qps_.push_back(verbs::QueuePair::borrow(cm_.ids[q].qp(), cm_.caps[q]));
}

void Side::fill_pattern(std::uint8_t seed, ctrl::Pulse* pulse) const noexcept {
  for (std::uint32_t q = 0; q < spec_.qps; ++q) {  // rdma_cm: before its QPs exist
    std::byte* p = tx(q);
    for (std::uint64_t i = 0; i < spec_.slot_bytes(); ++i) {
      p[i] = static_cast<std::byte>(pattern_byte(seed, i));
      if (pulse != nullptr && i % kPatternChunkBytes == kPatternChunkBytes - 1) pulse->beat();
    }
  }
}

std::vector<verbs::Endpoint> Side::endpoints() const {
  std::vector<verbs::Endpoint> out;
  out.reserve(qps_.size());
  for (std::uint32_t q = 0; q < qps_.size(); ++q) {
    auto ep = qps_[q].local_endpoint(cfg_);
    ep.qkey = cfg_.qkey;
    if (spec_.rdma_cm && spec_.transport == IBV_QPT_UD) {
      // rdma_cm chose the Q_Key (its UDP port space's) when it set the QP up.
      ibv_qp_attr attr{};
      ibv_qp_init_attr init{};
      if (ibv_query_qp(qps_[q].get(), &attr, IBV_QP_QKEY, &init) == 0) ep.qkey = attr.qkey;
    }
    ep.addr = addr(region(q));
    ep.rkey = mr(q).rkey();
    ep.length = spec_.region_bytes();
    out.push_back(ep);
  }
  return out;
}

void Side::connect(const std::vector<verbs::Endpoint>& remote) {
  if (remote.size() != qps_.size()) {
    throw RunError(fmt::format("peer offered {} queue pairs, expected {}", remote.size(), qps_.size()));
  }
  remote_ = remote;
  if (spec_.rdma_cm) {
    // rdma_cm connected the QPs; a UD client sends along the route it resolved.
    if (spec_.transport != IBV_QPT_UD) return;
    for (std::uint32_t q = 0; q < qps_.size(); ++q) {
      if (q < cm_.routes.size() && cm_.routes[q]) {
        const auto& r = *cm_.routes[q];
        ahs_.emplace_back(ctx_.pd(), r.ah, r.qpn, r.qkey);
      } else {
        ahs_.emplace_back(ctx_.pd(), remote[q], ctx_.gid_index(), cfg_.port, cfg_.sl, cfg_.traffic_class,
                          cfg_.hop_limit);
      }
    }
    return;
  }
  for (std::uint32_t q = 0; q < qps_.size(); ++q) {
    if (spec_.transport == IBV_QPT_UD) {
      qps_[q].activate(cfg_);
      ahs_.emplace_back(ctx_.pd(), remote[q], ctx_.gid_index(), cfg_.port, cfg_.sl, cfg_.traffic_class, cfg_.hop_limit);
    } else {
      qps_[q].connect(remote[q], cfg_);
    }
  }
}

}  // namespace fabench::pair
