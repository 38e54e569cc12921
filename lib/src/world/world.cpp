#include "fabench/world/world.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fabench/ctrl/wire.hpp"
#include "fabench/base/error.hpp"

namespace fabench::world {

namespace {

std::vector<std::uint32_t> sorted_unique(std::vector<std::uint32_t> v, std::uint32_t self) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  v.erase(std::remove(v.begin(), v.end(), self), v.end());
  return v;
}

// The sorted peer set, checked against the world's size and the lanes asked.
std::vector<std::uint32_t> checked_peers(std::span<const std::uint32_t> peers, std::uint32_t rank, std::uint32_t size,
                                         const WorldOptions& options) {
  auto out = sorted_unique({peers.begin(), peers.end()}, rank);
  for (const auto p : out) {
    if (p >= size) throw RunError(fmt::format("peer rank {} outside a world of {}", p, size));
  }
  if (options.qps_per_peer == 0) throw UserError("qps_per_peer must be at least 1");
  return out;
}

int cq_depth(std::size_t peers, const WorldOptions& o, std::uint32_t per_qp) {
  return static_cast<int>(std::max<std::size_t>(1, peers) * std::max<std::uint32_t>(1, o.qps_per_peer) * per_qp);
}

// One RC QP per peer and lane. The arena is the target of peers' writes and the source of
// ours; reads are not used by the collectives (writes with immediate carry everything). The
// ACK timeout is the N-rank binaries' (-u); the other QP attributes are QpConfig's defaults.
verbs::BundleSpec bundle_spec(const harness::Context& ctx, std::size_t peers, const WorldOptions& o) {
  verbs::BundleSpec b;
  b.qps = static_cast<std::uint32_t>(peers * o.qps_per_peer);
  b.qp.timeout = o.qp_timeout;
  b.qp.port = ctx.port().port_num;
  b.qp.gid_index = ctx.gid_index();
  b.qp.remote_access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  b.caps.max_send_wr = o.send_depth;
  b.caps.max_recv_wr = o.recv_depth;
  b.caps.max_send_sge = o.max_send_sge;
  b.caps.max_inline_data = o.max_inline;
  b.send_cqe = cq_depth(peers, o, o.send_depth);
  b.recv_cqe = cq_depth(peers, o, o.recv_depth);
  b.recv_events = o.recv_events;
  b.buffer_bytes = std::max<std::uint64_t>(o.arena_bytes, 4096);
  b.mr_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  return b;
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
      peers_(checked_peers(peers, boot.rank(), boot.size(), options)),
      slot_(boot.size(), -1),
      bundle_(ctx.device(), ctx.pd(), bundle_spec(ctx, peers_.size(), options)) {
  for (std::size_t i = 0; i < peers_.size(); ++i) slot_[peers_[i]] = static_cast<int>(i);
  connect(boot);
}

void World::connect(ctrl::Bootstrap& boot) {
  std::vector<std::vector<std::uint8_t>> out(size_);
  const std::uint32_t lanes = options_.qps_per_peer;
  const auto mine = bundle_.endpoints();
  for (std::size_t i = 0; i < mine.size(); ++i) ctrl::append_endpoint(out[peers_[i / lanes]], mine[i]);
  const auto in = boot.route(out);
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
  std::vector<verbs::Endpoint> remote;  // in QP order: peer by peer, lane by lane
  remote.reserve(peers_.size() * lanes);
  for (const auto p : peers_) {
    for (std::uint32_t lane = 0; lane < lanes; ++lane) {
      remote.push_back(ctrl::read_endpoint(
          std::span(in[p]).subspan(lane * ctrl::kEndpointWireBytes, ctrl::kEndpointWireBytes)));
    }
  }
  bundle_.connect(remote);
  remote_.clear();
  for (std::size_t i = 0; i < peers_.size(); ++i) {
    const verbs::Endpoint& ep = remote[i * lanes];
    remote_.push_back(RemoteArena{ep.addr, ep.rkey, ep.length});
  }
}

}  // namespace fabench::world
