// Side owns the resources of one benchmark configuration on one end: a
// verbs::Bundle (CQs, the registered buffer, the queue pairs, UD address
// handles, the peer's endpoints) built from a TestSpec so both ends build the
// same thing, and what the engines carry from one run to the next.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "fabench/base/error.hpp"
#include "fabench/harness/context.hpp"
#include "fabench/pair/spec.hpp"
#include "fabench/verbs/bundle.hpp"
#include "fabench/verbs/device.hpp"
#include "fabench/verbs/endpoint.hpp"
#include "fabench/verbs/pd.hpp"
#include "fabench/verbs/port.hpp"

namespace fabench::ctrl {
class Pulse;
}  // namespace fabench::ctrl

namespace fabench::pair {

// Rejects, with one line, what this device cannot do for this spec (message
// above the port's max_msg_sz, UD above the MTU, atomics without support,
// queue depths above max_qp_wr).
[[nodiscard]] std::optional<UserError> check_device_limits(const harness::Context& ctx, const TestSpec& spec);

// What each end chooses for itself from its own command line, as perftest's
// -u -L --pkey_index -o -X --use_hugepages --mr_per_qp are per end: not part of a
// TestSpec, so a follower keeps its own whatever the leader asks.
struct SideOptions {
  // Wider than the verbs fields (checked ranges): CLI11 reads a uint8_t "4" as the character '4'.
  unsigned qp_timeout = 14;     // RC: 4.096 us * 2^timeout per retry (0..31)
  unsigned hop_limit = 64;      // GRH hop limit (0..255)
  unsigned pkey_index = 0;      // P_Key table index of the QPs
  unsigned max_rd_atomic = 16;  // reads/atomics in flight as initiator (clamped to the device)
  int comp_vector = 0;          // completion vector of the CQs (event mode)
  bool huge_pages = false;      // buffers on huge pages, or fail
  bool mr_per_qp = false;       // one memory region per QP's slice of the buffer (else one for all)

  friend bool operator==(const SideOptions&, const SideOptions&) = default;
};

// What rdma_cm (-R, cm_link.hpp) connected for a Side (verbs/bundle.hpp).
using CmConnection = verbs::CmConnection;

class Side {
 public:
  // With spec.rdma_cm the QPs are not created here but by rdma_cm on its ids
  // (cm_link.hpp), which hands them over with adopt_cm(); ctx must then be
  // Context::rdma_cm().
  Side(const harness::Context& ctx, const TestSpec& spec, const SideOptions& options = {});

  // rdma_cm: what each QP is created with (CQs, type, capacities).
  [[nodiscard]] ibv_qp_init_attr cm_qp_attr() const noexcept { return bundle_.cm_qp_attr(); }
  [[nodiscard]] const harness::Context& context() const noexcept { return ctx_; }
  [[nodiscard]] const SideOptions& options() const noexcept { return options_; }
  // rdma_cm: takes the connected ids (one per QP, their QPs in RTS).
  void adopt_cm(CmConnection cm) { bundle_.adopt(std::move(cm)); }

  // One Endpoint per QP: qpn/psn/gid plus this QP's region of the buffer.
  [[nodiscard]] std::vector<verbs::Endpoint> endpoints() const;
  // RC/UC: RTR+RTS toward the peer's QPs; UD: activates and builds AHs.
  void connect(const std::vector<verbs::Endpoint>& remote);

  [[nodiscard]] const TestSpec& spec() const noexcept { return spec_; }
  [[nodiscard]] const verbs::CompletionQueue& send_cq() const noexcept { return bundle_.send_cq(); }
  [[nodiscard]] const verbs::CompletionQueue& recv_cq() const noexcept { return bundle_.recv_cq(); }
  // The registration that covers QP q's region: one for the whole buffer, or
  // one per QP (SideOptions::mr_per_qp).
  [[nodiscard]] const verbs::MemoryRegion& mr(std::uint32_t q) const noexcept { return bundle_.mr(q); }
  [[nodiscard]] std::size_t memory_regions() const noexcept { return bundle_.memory_regions(); }
  // A scatter/gather entry for `bytes` at `at`, inside QP q's region.
  [[nodiscard]] ibv_sge sge(std::uint32_t q, const std::byte* at, std::uint32_t bytes) const noexcept {
    const verbs::MemoryRegion& m = mr(q);
    return m.sge(static_cast<std::size_t>(at - m.data()), bytes);
  }
  [[nodiscard]] const std::vector<verbs::QueuePair>& qps() const noexcept { return bundle_.qps(); }
  [[nodiscard]] const std::vector<verbs::AddressHandle>& ahs() const noexcept { return bundle_.ahs(); }
  [[nodiscard]] const std::vector<verbs::Endpoint>& remote() const noexcept { return bundle_.remote(); }
  [[nodiscard]] std::uint32_t inline_threshold() const noexcept { return bundle_.inline_threshold(); }
  [[nodiscard]] const verbs::Bundle& bundle() const noexcept { return bundle_; }

  // What the engines carry from one run to the next on this Side.
  struct RunState {
    std::vector<std::uint32_t> rx_posted;  // receive WRs outstanding per QP
    std::uint64_t atomic_ops = 0;          // atomics done so far: the remote counter's value
  };
  [[nodiscard]] RunState& run_state() noexcept { return run_state_; }

  // The byte every tx slot holds at offset i (seeded per role), so the
  // receiver can check every payload byte after a run.
  [[nodiscard]] static std::uint8_t pattern_byte(std::uint8_t seed, std::uint64_t i) noexcept {
    return static_cast<std::uint8_t>(seed * 7U + i * 13U + 1U);
  }
  // `pulse` (a leader's Keepalives) is beaten every kPatternChunkBytes of a large buffer.
  void fill_pattern(std::uint8_t seed, ctrl::Pulse* pulse = nullptr) const noexcept;
  static constexpr std::uint64_t kPatternChunkBytes = 16ULL << 20;

  // Addresses inside QP q's local region.
  [[nodiscard]] std::byte* tx(std::uint32_t q) const noexcept { return region(q); }
  [[nodiscard]] std::byte* rx(std::uint32_t q) const noexcept { return region(q) + spec_.slot_bytes(); }
  [[nodiscard]] std::byte* atomic_target(std::uint32_t q) const noexcept { return region(q) + 2 * spec_.slot_bytes(); }
  [[nodiscard]] std::byte* atomic_result(std::uint32_t q) const noexcept { return atomic_target(q) + 8; }
  [[nodiscard]] std::uint64_t addr(const std::byte* p) const noexcept { return reinterpret_cast<std::uintptr_t>(p); }
  // The peer's rx slot and atomic target of QP q.
  [[nodiscard]] std::uint64_t remote_rx(std::uint32_t q) const noexcept { return remote()[q].addr + spec_.slot_bytes(); }
  [[nodiscard]] std::uint64_t remote_atomic(std::uint32_t q) const noexcept {
    return remote()[q].addr + 2 * spec_.slot_bytes();
  }

 private:
  [[nodiscard]] std::byte* region(std::uint32_t q) const noexcept { return bundle_.region(q); }

  const harness::Context& ctx_;
  TestSpec spec_;
  SideOptions options_;
  verbs::Bundle bundle_;
  RunState run_state_;
};

}  // namespace fabench::pair
