// PairLink: the verbs side of one pair of fabench-accept, at one end: a verbs::Bundle of `lanes`
// RC QPs to the partner, one send CQ and one receive CQ, one registered arena laid out as
//
//   [0, 8)          the latency slot the partner writes its ping (or pong) into
//   [64, 128)       the source of our own ping/pong writes
//   [4096, +bytes)  the bandwidth region: source of our writes, target of the partner's
//
// and the partner's arena to write to. Unlike World, it needs no collective: the endpoints go
// through whoever carries them (rank 0 in fabench-accept), so a dead rank elsewhere does not
// stop this pair. Receives for the in-band steps (sync()) are posted before connect().
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "fabench/harness/context.hpp"
#include "fabench/verbs/bundle.hpp"
#include "fabench/verbs/endpoint.hpp"
#include "fabench/world/world.hpp"

namespace fabench::acceptbench {

struct LinkOptions {
  std::uint32_t lanes = 1;           // QPs to the partner
  std::uint64_t bw_bytes = 1 << 20;  // bytes per bandwidth write
  std::uint32_t depth = 16;          // outstanding writes per lane
  std::uint8_t qp_timeout = world::kDefaultQpTimeout;  // RC ACK timeout (-u, world::RankFlags)
};

class PairLink {
 public:
  static constexpr std::size_t kPingOffset = 0;
  static constexpr std::size_t kPongSourceOffset = 64;
  static constexpr std::size_t kBwOffset = 4096;
  static constexpr std::uint32_t kStepReceives = 8;  // in-band step messages in flight at most

  PairLink(const harness::Context& ctx, const LinkOptions& options);
  PairLink(const PairLink&) = delete;
  PairLink& operator=(const PairLink&) = delete;
  PairLink(PairLink&&) = delete;
  PairLink& operator=(PairLink&&) = delete;
  ~PairLink() = default;

  // One per lane, each describing the arena.
  [[nodiscard]] std::vector<verbs::Endpoint> endpoints() const;
  // Throws std::runtime_error when `remote` does not hold one endpoint per lane.
  void connect(std::span<const verbs::Endpoint> remote);

  [[nodiscard]] const LinkOptions& options() const noexcept { return options_; }
  [[nodiscard]] const verbs::QueuePair& qp(std::uint32_t lane) const noexcept { return bundle_.qps()[lane]; }
  [[nodiscard]] const verbs::CompletionQueue& send_cq() const noexcept { return bundle_.send_cq(); }
  [[nodiscard]] const verbs::CompletionQueue& recv_cq() const noexcept { return bundle_.recv_cq(); }
  [[nodiscard]] const verbs::MemoryRegion& arena() const noexcept { return bundle_.mr(); }
  // The partner's arena (lane 0's endpoint; 0 before connect()).
  [[nodiscard]] std::uint64_t remote_addr() const noexcept { return remote_or_none().addr; }
  [[nodiscard]] std::uint32_t remote_rkey() const noexcept { return remote_or_none().rkey; }
  [[nodiscard]] std::uint32_t inline_threshold() const noexcept { return bundle_.inline_threshold(); }
  // Reposts one step receive on lane 0 (after one completed).
  void repost_step_receive();

 private:
  [[nodiscard]] verbs::Endpoint remote_or_none() const noexcept {
    return bundle_.remote().empty() ? verbs::Endpoint{} : bundle_.remote().front();
  }

  LinkOptions options_;
  verbs::Bundle bundle_;
};

}  // namespace fabench::acceptbench
