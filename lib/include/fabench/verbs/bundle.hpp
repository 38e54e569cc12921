// Bundle owns the RDMA resources one end posts on: a send and a receive CQ shared by all its
// queue pairs, one registered host buffer (one memory region, or one per QP's region), the
// QPs (created here and taken to INIT, or adopted from rdma_cm), and once connected the peer's
// Endpoint for each QP and, on UD, the address handle to it. pair::Side, world::World and
// acceptbench::PairLink each hold one; they differ only in their BundleSpec.
//
// Every QP is created with one QpCaps and walked through its states with one QpConfig, so a
// QP attribute (ACK timeout, retry counts, RNR timer, rd_atomic depths, path MTU, ...) is a
// field of QpConfig (qp.hpp), applied by QueuePair for every user; a user that needs another
// value than the default sets it in its BundleSpec.
//
// Members are declared parents first (CQs, buffer, regions, rdma_cm ids, QPs, AHs), so
// children are destroyed first.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include <infiniband/verbs.h>

#include "fabench/verbs/ah.hpp"
#include "fabench/verbs/cm.hpp"
#include "fabench/verbs/cq.hpp"
#include "fabench/verbs/endpoint.hpp"
#include "fabench/verbs/mr.hpp"
#include "fabench/verbs/qp.hpp"

namespace fabench::verbs {

class Device;
class ProtectionDomain;

// What rdma_cm (perftest's -R) connected for a Bundle: the ids, each owning its QP (in QP
// order), their event channel, what the provider granted each QP, and on a UD client the
// route rdma_cm resolved to each server QP.
struct CmConnection {
  struct UdRoute {
    ibv_ah_attr ah{};
    std::uint32_t qpn = 0;
    std::uint32_t qkey = 0;
  };
  std::unique_ptr<CmChannel> channel;  // declared first: destroyed after the ids
  std::vector<CmId> ids;
  std::vector<ibv_qp_cap> caps;
  std::vector<std::optional<UdRoute>> routes;  // empty, or one per QP
};

struct BundleSpec {
  ibv_qp_type transport = IBV_QPT_RC;
  std::uint32_t qps = 1;
  QpCaps caps;  // per QP; max_inline_data and max_send_sge are clamped to the device (bundle_caps)
  QpConfig qp;  // the attributes every QP is taken through INIT, RTR and RTS with
  int send_cqe = 16;
  int recv_cqe = 16;
  bool send_events = false;  // the CQ gets a completion channel (a rank can block on it)
  bool recv_events = false;
  int comp_vector = 0;
  std::uint64_t buffer_bytes = 4096;
  HugePages huge_pages = HugePages::kNo;
  int mr_access = IBV_ACCESS_LOCAL_WRITE;  // exactly what peers may do (mr.hpp)
  // QP q's region starts at q * region_bytes; 0: every QP's region is the whole buffer.
  std::uint64_t region_bytes = 0;
  bool mr_per_region = false;  // one registration per QP's region (with region_bytes), else one
  bool adopt_qps = false;      // rdma_cm creates the QPs on its ids and adopt() hands them over
};

// The capacities a QP of `spec` asks for: inline data at most the device's for the transport,
// send gather entries between 1 and the device's max_sge.
[[nodiscard]] QpCaps bundle_caps(const BundleSpec& spec, std::uint32_t device_max_inline,
                                 std::uint32_t device_max_sge) noexcept;
// Where QP q's region starts in the buffer, and its length (the whole buffer without regions).
[[nodiscard]] std::uint64_t region_offset(const BundleSpec& spec, std::uint32_t q) noexcept;
[[nodiscard]] std::uint64_t region_length(const BundleSpec& spec) noexcept;

class Bundle {
 public:
  // Throws VerbsError when a verb fails (CQ, buffer, registration, QP creation, INIT).
  Bundle(const Device& device, const ProtectionDomain& pd, const BundleSpec& spec);
  Bundle(const Bundle&) = delete;
  Bundle& operator=(const Bundle&) = delete;

  // rdma_cm: what each QP is created with (CQs, type, capacities).
  [[nodiscard]] ibv_qp_init_attr cm_qp_attr() const noexcept;
  // rdma_cm: takes the connected ids (one per QP, their QPs in RTS). Throws VerbsError (EINVAL)
  // unless this bundle awaits exactly that many QPs.
  void adopt(CmConnection cm);

  // One per QP: how a peer reaches it, and its region (addr, rkey, length).
  [[nodiscard]] std::vector<Endpoint> endpoints() const;
  // RC/UC: RTR and RTS toward remote[q]; UD: RTR and RTS, and an address handle to remote[q]
  // (over rdma_cm: the route it resolved). Throws VerbsError (EINVAL) unless one per QP.
  void connect(std::span<const Endpoint> remote);

  [[nodiscard]] const BundleSpec& spec() const noexcept { return spec_; }
  [[nodiscard]] const QpConfig& qp_config() const noexcept { return spec_.qp; }
  [[nodiscard]] std::uint32_t inline_threshold() const noexcept { return spec_.caps.max_inline_data; }
  [[nodiscard]] std::uint32_t max_send_sge() const noexcept { return spec_.caps.max_send_sge; }
  [[nodiscard]] const CompletionQueue& send_cq() const noexcept { return send_cq_; }
  [[nodiscard]] const CompletionQueue& recv_cq() const noexcept { return recv_cq_; }
  [[nodiscard]] std::byte* region(std::uint32_t q) const noexcept { return buffer_.data() + region_offset(spec_, q); }
  // The registration that covers QP q's region.
  [[nodiscard]] const MemoryRegion& mr(std::uint32_t q = 0) const noexcept { return mrs_[mrs_.size() == 1 ? 0 : q]; }
  [[nodiscard]] std::size_t memory_regions() const noexcept { return mrs_.size(); }
  [[nodiscard]] const std::vector<QueuePair>& qps() const noexcept { return qps_; }
  [[nodiscard]] const std::vector<AddressHandle>& ahs() const noexcept { return ahs_; }
  // The peer's Endpoint of each QP (empty before connect()).
  [[nodiscard]] const std::vector<Endpoint>& remote() const noexcept { return remote_; }

 private:
  void connect_ud(std::span<const Endpoint> remote);

  const ProtectionDomain& pd_;
  BundleSpec spec_;
  CompletionQueue send_cq_;
  CompletionQueue recv_cq_;
  HostBuffer buffer_;
  std::vector<MemoryRegion> mrs_;
  CmConnection cm_;  // rdma_cm only; owns the QPs qps_ borrows, so declared before them
  std::vector<QueuePair> qps_;
  std::vector<AddressHandle> ahs_;
  std::vector<Endpoint> remote_;
};

}  // namespace fabench::verbs
