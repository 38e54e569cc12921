// Bundle: the CQs, buffer, regions and QPs of one end, their endpoints and their connection.
#include "fabench/verbs/bundle.hpp"

#include <algorithm>
#include <cerrno>
#include <utility>

#include <fmt/format.h>

#include "fabench/verbs/device.hpp"
#include "fabench/verbs/error.hpp"
#include "fabench/verbs/pd.hpp"

namespace fabench::verbs {

QpCaps bundle_caps(const BundleSpec& spec, std::uint32_t device_max_inline, std::uint32_t device_max_sge) noexcept {
  QpCaps caps = spec.caps;
  caps.max_inline_data = std::min(caps.max_inline_data, device_max_inline);
  caps.max_send_sge = std::clamp<std::uint32_t>(caps.max_send_sge, 1, std::max<std::uint32_t>(device_max_sge, 1));
  return caps;
}

std::uint64_t region_offset(const BundleSpec& spec, std::uint32_t q) noexcept { return q * spec.region_bytes; }

std::uint64_t region_length(const BundleSpec& spec) noexcept {
  return spec.region_bytes != 0 ? spec.region_bytes : spec.buffer_bytes;
}

namespace {

BundleSpec granted(const Device& device, BundleSpec spec) {
  spec.caps = bundle_caps(spec, device.max_inline_data(spec.transport),
                          static_cast<std::uint32_t>(device.raw_attr().max_sge));
  return spec;
}

}  // namespace

Bundle::Bundle(const Device& device, const ProtectionDomain& pd, const BundleSpec& spec)
    : pd_(pd),
      spec_(granted(device, spec)),
      send_cq_(device, spec.send_cqe, spec.send_events, spec.comp_vector),
      recv_cq_(device, spec.recv_cqe, spec.recv_events, spec.comp_vector),
      buffer_(spec.buffer_bytes, spec.huge_pages) {
  if (spec_.mr_per_region && spec_.region_bytes != 0 && spec_.qps > 1) {
    mrs_.reserve(spec_.qps);
    for (std::uint32_t q = 0; q < spec_.qps; ++q) mrs_.emplace_back(pd, region(q), spec_.region_bytes, spec_.mr_access);
  } else {
    mrs_.emplace_back(pd, buffer_, spec_.mr_access);
  }
  if (spec_.adopt_qps) return;  // rdma_cm creates them on its ids: adopt()
  qps_.reserve(spec_.qps);
  for (std::uint32_t q = 0; q < spec_.qps; ++q) {
    qps_.emplace_back(pd, send_cq_, recv_cq_, spec_.transport, spec_.caps);
    qps_.back().to_init(spec_.qp);
  }
}

ibv_qp_init_attr Bundle::cm_qp_attr() const noexcept {
  return qp_init_attr(send_cq_, recv_cq_, spec_.transport, spec_.caps);
}

void Bundle::adopt(CmConnection cm) {
  if (!spec_.adopt_qps || !qps_.empty() || cm.ids.size() != spec_.qps || cm.caps.size() != spec_.qps) {
    throw VerbsError("rdma_create_qp", EINVAL, "Bundle::adopt: not an rdma_cm bundle awaiting its queue pairs");
  }
  cm_ = std::move(cm);
  qps_.reserve(spec_.qps);
  for (std::uint32_t q = 0; q < spec_.qps; ++q) qps_.push_back(QueuePair::borrow(cm_.ids[q].qp(), cm_.caps[q]));
}

std::vector<Endpoint> Bundle::endpoints() const {
  std::vector<Endpoint> out;
  out.reserve(qps_.size());
  for (std::uint32_t q = 0; q < qps_.size(); ++q) {
    Endpoint ep = qps_[q].local_endpoint(spec_.qp);
    if (spec_.adopt_qps && spec_.transport == IBV_QPT_UD) {
      // rdma_cm chose the Q_Key (its UDP port space's) when it set the QP up.
      ibv_qp_attr attr{};
      ibv_qp_init_attr init{};
      if (ibv_query_qp(qps_[q].get(), &attr, IBV_QP_QKEY, &init) == 0) ep.qkey = attr.qkey;
    }
    ep.addr = reinterpret_cast<std::uintptr_t>(region(q));
    ep.rkey = mr(q).rkey();
    ep.length = region_length(spec_);
    out.push_back(ep);
  }
  return out;
}

void Bundle::connect(std::span<const Endpoint> remote) {
  if (remote.size() != qps_.size()) {
    throw VerbsError("ibv_modify_qp", EINVAL,
                     fmt::format("{} remote endpoint(s) for {} queue pair(s)", remote.size(), qps_.size()));
  }
  remote_.assign(remote.begin(), remote.end());
  if (spec_.transport == IBV_QPT_UD) {
    connect_ud(remote);
  } else if (!spec_.adopt_qps) {  // rdma_cm connected them
    for (std::size_t q = 0; q < qps_.size(); ++q) qps_[q].connect(remote[q], spec_.qp);
  }
}

void Bundle::connect_ud(std::span<const Endpoint> remote) {
  const QpConfig& c = spec_.qp;
  for (std::uint32_t q = 0; q < qps_.size(); ++q) {
    if (spec_.adopt_qps && q < cm_.routes.size() && cm_.routes[q]) {
      const auto& r = *cm_.routes[q];  // a UD client sends along the route rdma_cm resolved
      ahs_.emplace_back(pd_, r.ah, r.qpn, r.qkey);
      continue;
    }
    if (!spec_.adopt_qps) qps_[q].activate(c);
    ahs_.emplace_back(pd_, remote[q], c.gid_index, c.port, c.sl, c.traffic_class, c.hop_limit);
  }
}

}  // namespace fabench::verbs
