// PairLink: the verbs side of one pair of fabench-accept, at one end: `lanes` RC QPs to the
// partner, one send CQ and one receive CQ, one registered arena laid out as
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
#include "fabench/verbs/cq.hpp"
#include "fabench/verbs/endpoint.hpp"
#include "fabench/verbs/mr.hpp"
#include "fabench/verbs/qp.hpp"
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
  [[nodiscard]] const verbs::QueuePair& qp(std::uint32_t lane) const noexcept { return qps_[lane]; }
  [[nodiscard]] const verbs::CompletionQueue& send_cq() const noexcept { return send_cq_; }
  [[nodiscard]] const verbs::CompletionQueue& recv_cq() const noexcept { return recv_cq_; }
  [[nodiscard]] const verbs::MemoryRegion& arena() const noexcept { return mr_; }
  [[nodiscard]] std::uint64_t remote_addr() const noexcept { return remote_addr_; }
  [[nodiscard]] std::uint32_t remote_rkey() const noexcept { return remote_rkey_; }
  [[nodiscard]] std::uint32_t inline_threshold() const noexcept { return inline_threshold_; }
  // Reposts one step receive on lane 0 (after one completed).
  void repost_step_receive();

 private:
  const harness::Context& ctx_;
  LinkOptions options_;
  verbs::QpConfig cfg_;
  std::uint32_t inline_threshold_ = 0;
  verbs::CompletionQueue send_cq_;
  verbs::CompletionQueue recv_cq_;
  verbs::HostBuffer buffer_;
  verbs::MemoryRegion mr_;
  std::vector<verbs::QueuePair> qps_;
  std::uint64_t remote_addr_ = 0;
  std::uint32_t remote_rkey_ = 0;
};

}  // namespace fabench::acceptbench
