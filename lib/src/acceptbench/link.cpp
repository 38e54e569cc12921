#include "fabench/acceptbench/link.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "fabench/base/error.hpp"

namespace fabench::acceptbench {

namespace {

constexpr int kArenaAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;

verbs::QpConfig qp_config(const harness::Context& ctx, const LinkOptions& o) {
  verbs::QpConfig cfg;
  cfg.timeout = o.qp_timeout;
  cfg.port = ctx.port().port_num;
  cfg.gid_index = ctx.gid_index();
  cfg.remote_access = IBV_ACCESS_REMOTE_WRITE;
  return cfg;
}

}  // namespace

PairLink::PairLink(const harness::Context& ctx, const LinkOptions& options)
    : ctx_(ctx),
      options_(options),
      cfg_(qp_config(ctx, options)),
      inline_threshold_(std::min<std::uint32_t>(64, ctx.device().max_inline_data(IBV_QPT_RC))),
      send_cq_(ctx.device(), static_cast<int>(options.lanes * (options.depth + 2))),
      recv_cq_(ctx.device(), static_cast<int>(kStepReceives * 2)),
      buffer_(kBwOffset + options.bw_bytes),
      mr_(ctx.pd(), buffer_, kArenaAccess) {
  if (options_.lanes == 0 || options_.depth == 0 || options_.bw_bytes == 0 || options_.bw_bytes > (1ULL << 31))
    throw UserError("PairLink: lanes, depth and bytes (at most 2 GiB) must be positive");
  verbs::QpCaps caps;
  caps.max_send_wr = options_.depth + 2;  // + a step send and a ping
  caps.max_recv_wr = kStepReceives;
  caps.max_send_sge = 1;
  caps.max_recv_sge = 1;
  caps.max_inline_data = inline_threshold_;
  qps_.reserve(options_.lanes);
  for (std::uint32_t lane = 0; lane < options_.lanes; ++lane) {
    qps_.emplace_back(ctx.pd(), send_cq_, recv_cq_, IBV_QPT_RC, caps);
    qps_.back().to_init(cfg_);
  }
  for (std::uint32_t i = 0; i < kStepReceives; ++i) repost_step_receive();
}

void PairLink::repost_step_receive() {
  ibv_recv_wr wr{};
  wr.wr_id = 0;
  wr.sg_list = nullptr;
  wr.num_sge = 0;  // step messages are zero-length sends with immediate data
  if (const int rc = qps_[0].post_recv(wr); rc != 0) throw qps_[0].recv_error(rc, wr);
}

std::vector<verbs::Endpoint> PairLink::endpoints() const {
  std::vector<verbs::Endpoint> out;
  for (const auto& qp : qps_) {
    verbs::Endpoint ep = qp.local_endpoint(cfg_);
    mr_.describe(ep);
    out.push_back(ep);
  }
  return out;
}

void PairLink::connect(std::span<const verbs::Endpoint> remote) {
  if (remote.size() != qps_.size()) {
    throw RunError(fmt::format("the partner offers {} QP(s), this side has {} (--qps differs between ranks?)",
                               remote.size(), qps_.size()));
  }
  if (remote.front().length < kBwOffset + options_.bw_bytes) {
    throw RunError(fmt::format("the partner's arena holds {} bytes, {} needed (-s differs between ranks?)",
                               remote.front().length, kBwOffset + options_.bw_bytes));
  }
  for (std::size_t i = 0; i < qps_.size(); ++i) qps_[i].connect(remote[i], cfg_);
  remote_addr_ = remote.front().addr;
  remote_rkey_ = remote.front().rkey;
}

}  // namespace fabench::acceptbench
