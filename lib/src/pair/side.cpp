#include "fabench/pair/side.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "fabench/ctrl/heartbeat.hpp"
#include "fabench/harness/cli.hpp"

#include "fabench/verbs/error.hpp"
#include "fabench/verbs/gid.hpp"
#include "fabench/base/error.hpp"

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
// The pair's QP attributes: perftest's per-end flags (SideOptions) and the spec's -m, --sl,
// --tclass; the rest are QpConfig's defaults.
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

verbs::BundleSpec bundle_spec(const harness::Context& ctx, const TestSpec& spec, const SideOptions& options) {
  verbs::BundleSpec b;
  b.transport = spec.transport;
  b.qps = spec.qps;
  b.qp = make_config(ctx, spec, options);
  // Inline (the CPU copies the payload into the WQE) saves the NIC a DMA
  // read for small messages; -I sets the threshold, default the device max
  // capped where copying stops paying (perftest's default is 220 B).
  b.caps.max_inline_data = spec.inline_bytes >= 0 ? static_cast<std::uint32_t>(spec.inline_bytes) : 220;
  b.caps.max_send_wr = spec.tx_depth;
  b.caps.max_recv_wr = (spec.op == Op::kSend) ? spec.rx_depth : 1;
  b.send_cqe = cq_entries(spec, true);
  b.recv_cqe = cq_entries(spec, false);
  b.send_events = b.recv_events = spec.events;
  b.comp_vector = options.comp_vector;
  b.buffer_bytes = spec.buffer_bytes();
  b.huge_pages = options.huge_pages ? verbs::HugePages::kRequire : verbs::HugePages::kNo;
  b.mr_access = IBV_ACCESS_LOCAL_WRITE | spec.remote_access();
  b.region_bytes = spec.region_bytes();
  b.mr_per_region = options.mr_per_qp;
  b.adopt_qps = spec.rdma_cm;
  return b;
}
}  // namespace

Side::Side(const harness::Context& ctx, const TestSpec& spec, const SideOptions& options)
    : ctx_(ctx), spec_(spec), options_(options), bundle_(ctx.device(), ctx.pd(), bundle_spec(ctx, spec, options)) {
  run_state_.rx_posted.assign(spec.qps, 0);
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
  std::vector<verbs::Endpoint> out = bundle_.endpoints();
  // The pair protocol carries the Q_Key on every endpoint (only UD reads it).
  for (auto& ep : out) {
    if (spec_.transport != IBV_QPT_UD) ep.qkey = bundle_.qp_config().qkey;
  }
  return out;
}

void Side::connect(const std::vector<verbs::Endpoint>& remote) {
  if (remote.size() != qps().size()) {
    throw RunError(fmt::format("peer offered {} queue pairs, expected {}", remote.size(), qps().size()));
  }
  bundle_.connect(remote);
}

}  // namespace fabench::pair
