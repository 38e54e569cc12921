#include "fabench/world/world.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fabench/base/error.hpp"
#include "fabench/ctrl/wire.hpp"

namespace fabench::world {

namespace {

std::vector<std::uint32_t> sorted_unique(std::vector<std::uint32_t> v, std::uint32_t self) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  v.erase(std::remove(v.begin(), v.end(), self), v.end());
  return v;
}

// The arena is the target of peers' writes and the source of ours; reads
// are not used by the collectives (writes with immediate carry everything).
constexpr int kArenaAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

verbs::QpConfig qp_config(const harness::Context& ctx, const WorldOptions& o) {
  verbs::QpConfig cfg;
  cfg.timeout = o.qp_timeout;
  cfg.port = ctx.port().port_num;
  cfg.gid_index = ctx.gid_index();
  cfg.remote_access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  return cfg;
}

int cq_depth(std::size_t peers, const WorldOptions& o, std::uint32_t per_qp) {
  return static_cast<int>(std::max<std::size_t>(1, peers) * std::max<std::uint32_t>(1, o.qps_per_peer) * per_qp);
}

}  // namespace

std::vector<std::uint32_t> ring_peers(std::uint32_t rank, std::uint32_t size) {
  if (size < 2) return {};
  return sorted_unique({(rank + 1) % size, (rank + size - 1) % size}, rank);
}

std::vector<std::uint32_t> halving_doubling_peers(std::uint32_t rank, std::uint32_t size) {
  if (size < 2) return {};
  const std::uint32_t pow2 = std::bit_floor(size);
  const std::uint32_t rem = size - pow2;
  std::vector<std::uint32_t> out;
  if (rank < 2 * rem) out.push_back(rank ^ 1U);     // the fold partner
  if (rank < 2 * rem && rank % 2 == 1) return out;  // sits out the core
  const std::uint32_t nu = rank < 2 * rem ? rank / 2 : rank - rem;
  auto real = [rem](std::uint32_t core) { return core < rem ? 2 * core : core + rem; };
  for (std::uint32_t mask = 1; mask < pow2; mask *= 2) out.push_back(real(nu ^ mask));
  return sorted_unique(std::move(out), rank);
}

std::vector<std::uint32_t> all_peers(std::uint32_t rank, std::uint32_t size) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t r = 0; r < size; ++r) {
    if (r != rank) out.push_back(r);
  }
  return out;
}

World::World(ctrl::Bootstrap& boot, const harness::Context& ctx, std::span<const std::uint32_t> peers,
             const WorldOptions& options)
    : ctx_(ctx),
      rank_(boot.rank()),
      size_(boot.size()),
      options_(options),
      peers_(sorted_unique({peers.begin(), peers.end()}, boot.rank())),
      slot_(boot.size(), -1),
      cfg_(qp_config(ctx, options)),
      send_cq_(ctx.device(), cq_depth(peers_.size(), options, options.send_depth)),
      recv_cq_(ctx.device(), cq_depth(peers_.size(), options, options.recv_depth), options.recv_events),
      buffer_(std::max<std::uint64_t>(options.arena_bytes, 4096)),
      mr_(ctx.pd(), buffer_, kArenaAccess) {
  for (const auto p : peers_) {
    if (p >= size_) throw RunError(fmt::format("peer rank {} outside a world of {}", p, size_));
  }
  if (options_.qps_per_peer == 0) throw UserError("qps_per_peer must be at least 1");
  inline_threshold_ = std::min(options.max_inline, ctx.device().max_inline_data(IBV_QPT_RC));
  max_send_sge_ = std::clamp<std::uint32_t>(options.max_send_sge, 1,
                                            static_cast<std::uint32_t>(ctx.device().raw_attr().max_sge));
  verbs::QpCaps caps;
  caps.max_send_wr = options.send_depth;
  caps.max_recv_wr = options.recv_depth;
  caps.max_send_sge = max_send_sge_;
  caps.max_recv_sge = 1;
  caps.max_inline_data = inline_threshold_;
  qps_.reserve(peers_.size() * options_.qps_per_peer);
  for (std::size_t i = 0; i < peers_.size(); ++i) {
    slot_[peers_[i]] = static_cast<int>(i);
    for (std::uint32_t lane = 0; lane < options_.qps_per_peer; ++lane) {
      qps_.emplace_back(ctx.pd(), send_cq_, recv_cq_, IBV_QPT_RC, caps);
      qps_.back().to_init(cfg_);
    }
  }
  connect(boot);
}

void World::connect(ctrl::Bootstrap& boot) {
  std::vector<std::vector<std::uint8_t>> out(size_);
  const std::uint32_t lanes = options_.qps_per_peer;
  for (std::size_t i = 0; i < peers_.size(); ++i) {
    for (std::uint32_t lane = 0; lane < lanes; ++lane) {
      verbs::Endpoint ep = qps_[i * lanes + lane].local_endpoint(cfg_);
      mr_.describe(ep);
      ctrl::append_endpoint(out[peers_[i]], ep);
    }
  }
  const auto in = boot.route(out);
  remote_.assign(peers_.size(), RemoteArena{});
  std::vector<std::string> problems;
  for (std::uint32_t r = 0; r < size_; ++r) {
    const bool expected = slot_[r] >= 0;
    if (!expected && !in[r].empty())
      problems.push_back(fmt::format("{} wants a QP to us, we do not to it", boot.describe_rank(r)));
    if (expected && in[r].size() != ctrl::kEndpointWireBytes * lanes) {
      problems.push_back(fmt::format("{} sent {} endpoint bytes for us (expected {} endpoint(s))",
                                     boot.describe_rank(r), in[r].size(), lanes));
    }
  }
  if (!problems.empty()) {
    throw RunError(fmt::format("rank {}: peer sets disagree: {}", rank_, fmt::join(problems, "; ")));
  }
  for (std::size_t i = 0; i < peers_.size(); ++i) {
    const auto& bytes = in[peers_[i]];
    for (std::uint32_t lane = 0; lane < lanes; ++lane) {
      const verbs::Endpoint ep = ctrl::read_endpoint(
          std::span(bytes).subspan(lane * ctrl::kEndpointWireBytes, ctrl::kEndpointWireBytes));
      qps_[i * lanes + lane].connect(ep, cfg_);
      if (lane == 0) remote_[i] = RemoteArena{ep.addr, ep.rkey, ep.length};
    }
  }
}

}  // namespace fabench::world
