#include "fabench/acceptbench/link.hpp"
#include "fabench/base/error.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace fabench::acceptbench {

namespace {

void check(const LinkOptions& o) {
  if (o.lanes == 0 || o.depth == 0 || o.bw_bytes == 0 || o.bw_bytes > (1ULL << 31))
    throw UserError("PairLink: lanes, depth and bytes (at most 2 GiB) must be positive");
}

// `lanes` RC QPs, each with room for the bandwidth window plus a step send and a ping, and
// kStepReceives zero-length receives; the partner only writes (no reads, no atomics). The ACK
// timeout is the N-rank binaries' (-u); the other QP attributes are QpConfig's defaults.
verbs::BundleSpec bundle_spec(const harness::Context& ctx, const LinkOptions& o) {
  check(o);
  verbs::BundleSpec b;
  b.qps = o.lanes;
  b.qp.timeout = o.qp_timeout;
  b.qp.port = ctx.port().port_num;
  b.qp.gid_index = ctx.gid_index();
  b.qp.remote_access = IBV_ACCESS_REMOTE_WRITE;
  b.caps.max_send_wr = o.depth + 2;  // + a step send and a ping
  b.caps.max_recv_wr = PairLink::kStepReceives;
  b.caps.max_inline_data = 64;
  b.send_cqe = static_cast<int>(o.lanes * (o.depth + 2));
  b.recv_cqe = static_cast<int>(PairLink::kStepReceives * 2);
  b.buffer_bytes = PairLink::kBwOffset + o.bw_bytes;
  b.mr_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  return b;
}

}  // namespace

PairLink::PairLink(const harness::Context& ctx, const LinkOptions& options)
    : options_(options), bundle_(ctx.device(), ctx.pd(), bundle_spec(ctx, options)) {
  for (std::uint32_t i = 0; i < kStepReceives; ++i) repost_step_receive();
}

void PairLink::repost_step_receive() {
  ibv_recv_wr wr{};
  wr.wr_id = 0;
  wr.sg_list = nullptr;
  wr.num_sge = 0;  // step messages are zero-length sends with immediate data
  if (const int rc = qp(0).post_recv(wr); rc != 0) throw qp(0).recv_error(rc, wr);
}

std::vector<verbs::Endpoint> PairLink::endpoints() const { return bundle_.endpoints(); }

void PairLink::connect(std::span<const verbs::Endpoint> remote) {
  if (remote.size() != options_.lanes) {
    throw RunError(fmt::format("the partner offers {} QP(s), this side has {} (--qps differs between ranks?)",
                                         remote.size(), options_.lanes));
  }
  if (remote.front().length < kBwOffset + options_.bw_bytes) {
    throw RunError(fmt::format("the partner's arena holds {} bytes, {} needed (-s differs between ranks?)",
                                         remote.front().length, kBwOffset + options_.bw_bytes));
  }
  bundle_.connect(remote);
}

}  // namespace fabench::acceptbench
