// World: the verbs side of N ranks. Each rank owns a verbs::Bundle: one registered arena
// (its buffers, same layout on every rank), one send CQ and one receive CQ shared by all its
// queue pairs, and `lanes` RC QPs per peer in a chosen peer set (ring neighbours,
// halving-doubling partners, all others), in peer order. Endpoints are exchanged through
// Bootstrap::route(), so rank j receives only the endpoints meant for j.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "fabench/ctrl/bootstrap.hpp"
#include "fabench/harness/context.hpp"
#include "fabench/verbs/bundle.hpp"

namespace fabench::world {

// Peer sets, as pure functions of (rank, size); sorted, without `rank`.
[[nodiscard]] std::vector<std::uint32_t> ring_peers(std::uint32_t rank, std::uint32_t size);
// Partners of recursive halving-doubling with the standard non-power-of-two
// fold (the first 2(N - 2^k) ranks pair up), i.e. every rank XOR 2^i among
// the 2^k survivors, plus the fold partner.
[[nodiscard]] std::vector<std::uint32_t> halving_doubling_peers(std::uint32_t rank, std::uint32_t size);
[[nodiscard]] std::vector<std::uint32_t> all_peers(std::uint32_t rank, std::uint32_t size);

// RC ACK timeout of the N-rank binaries (-u): 4.096 us x 2^20 = 4.3 s before a retransmission,
// as NCCL_IB_TIMEOUT; perftest's 14 (67 ms) fires under incast before the ACKs come back and
// starts a storm of go-back-N retransmissions (docs/collectives.md).
inline constexpr std::uint8_t kDefaultQpTimeout = 20;

struct WorldOptions {
  std::uint64_t arena_bytes = 0;  // registered on every rank (the same size everywhere)
  std::uint32_t send_depth = 64;  // send WRs per QP
  std::uint32_t recv_depth = 64;  // receive WRs per QP (write-with-immediate consumes one each)
  std::uint32_t max_inline = 0;   // inline threshold asked of each QP
  std::uint32_t qps_per_peer = 1; // lanes: QPs to each peer (the same on every rank)
  std::uint32_t max_send_sge = 1; // gather entries per send WR, clamped to the device's max_sge
  bool recv_events = false;       // the receive CQ gets a completion channel (a rank can block on it)
  std::uint8_t qp_timeout = kDefaultQpTimeout;  // RC ACK timeout: 4.096 us x 2^this
};

// A peer's arena, as this rank may write to it.
struct RemoteArena {
  std::uint64_t addr = 0;
  std::uint32_t rkey = 0;
  std::uint64_t bytes = 0;
};

class World {
 public:
  // Collective over all ranks of `boot`: builds this rank's resources, sends
  // each peer its endpoint, connects. `peers` must be symmetric across ranks
  // (i lists j exactly when j lists i); a rank that disagrees is named.
  World(ctrl::Bootstrap& boot, const harness::Context& ctx, std::span<const std::uint32_t> peers,
        const WorldOptions& options);
  World(const World&) = delete;
  World& operator=(const World&) = delete;
  World(World&&) = delete;
  World& operator=(World&&) = delete;
  ~World() = default;

  [[nodiscard]] std::uint32_t rank() const noexcept { return rank_; }
  [[nodiscard]] std::uint32_t size() const noexcept { return size_; }
  [[nodiscard]] const harness::Context& context() const noexcept { return ctx_; }
  [[nodiscard]] std::span<const std::uint32_t> peers() const noexcept { return peers_; }
  [[nodiscard]] bool has_peer(std::uint32_t peer) const noexcept { return slot_[peer] >= 0; }
  // The QP to `peer` (must be in peers()) on lane `lane` (< qps_per_peer).
  [[nodiscard]] const verbs::QueuePair& qp(std::uint32_t peer, std::uint32_t lane = 0) const noexcept {
    return bundle_.qps()[static_cast<std::size_t>(slot_[peer]) * options_.qps_per_peer + lane];
  }
  [[nodiscard]] std::uint32_t lanes() const noexcept { return options_.qps_per_peer; }
  [[nodiscard]] std::uint32_t max_send_sge() const noexcept { return bundle_.max_send_sge(); }
  [[nodiscard]] const RemoteArena& remote(std::uint32_t peer) const noexcept {
    return remote_[static_cast<std::size_t>(slot_[peer])];
  }
  [[nodiscard]] const verbs::MemoryRegion& arena() const noexcept { return bundle_.mr(); }
  [[nodiscard]] const verbs::CompletionQueue& send_cq() const noexcept { return bundle_.send_cq(); }
  [[nodiscard]] const verbs::CompletionQueue& recv_cq() const noexcept { return bundle_.recv_cq(); }
  [[nodiscard]] const WorldOptions& options() const noexcept { return options_; }
  [[nodiscard]] std::uint32_t inline_threshold() const noexcept { return bundle_.inline_threshold(); }

 private:
  void connect(ctrl::Bootstrap& boot);

  const harness::Context& ctx_;
  std::uint32_t rank_;
  std::uint32_t size_;
  WorldOptions options_;
  std::vector<std::uint32_t> peers_;
  std::vector<int> slot_;  // by rank: index into qps_/remote_, -1 when not a peer
  verbs::Bundle bundle_;
  std::vector<RemoteArena> remote_;  // lane 0's endpoint of each peer, in peer order
};

}  // namespace fabench::world
