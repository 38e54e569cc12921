// The write/notify step of the collective executor (executor.hpp), one class per transport, the
// same small interface, so the executor's loop is one template over them (no branch on the
// transport, no virtual call in the loop):
//   post(w, p)        start the schedule's write w for call parity p
//   poll(p, k)        take what has happened (completions, arrivals); how many things, -1: error
//   landed(p, k)      how many of step k's arrivals have landed (not yet consumed)
//   step_done(p, k)   step k's expected arrivals have landed and this rank's writes completed
//   consume(p, k)     step k's arrivals are used up (a peer may already send the next call's)
//   waiting_for(p, k) what is still missing, for the stall message
// RdmaTransport: RDMA writes with immediate over a World's RC QPs; arrivals are receive
// completions whose immediate names (parity, step), writes complete with send completions.
// ShmTransport: a copy into the peer's shared-memory arena (ShmWorld), then a release increment
// of the peer's counter for (parity, step); a write is complete once copied.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <infiniband/verbs.h>

#include "fabench/coll/schedule.hpp"
#include "fabench/harness/loop.hpp"
#include "fabench/world/shm.hpp"
#include "fabench/world/world.hpp"

namespace fabench::collbench {

struct ArenaLayout {
  std::uint64_t input = 0;
  std::uint64_t output[2] = {0, 0};
  std::uint64_t scratch[2] = {0, 0};
  std::uint64_t total = 0;

  // Regions aligned to 64 bytes (cache lines; element alignment for the kernels).
  [[nodiscard]] static ArenaLayout of(const coll::Schedule& s);
  [[nodiscard]] std::uint64_t offset(coll::Buf b, unsigned parity) const noexcept;
};

class RdmaTransport {
 public:
  // Prebuilds every write of `schedule` for both parities.
  RdmaTransport(const world::World& world, const coll::Schedule& schedule, const ArenaLayout& layout);
  // The initial receives: once per world, before the first run of any executor.
  static void post_receives(const world::World& world);

  [[nodiscard]] std::byte* base() const noexcept { return base_; }
  int post(std::size_t w, unsigned p, std::string& error) noexcept;
  int poll(unsigned p, std::size_t k, std::string& error) noexcept;
  [[nodiscard]] std::uint64_t landed(unsigned p, std::size_t k) const noexcept { return arrived_[p][k]; }
  [[nodiscard]] bool step_done(unsigned p, std::size_t k) const noexcept {
    return arrived_[p][k] >= expected_[k] && outstanding_ == 0;
  }
  void consume(unsigned p, std::size_t k) noexcept { arrived_[p][k] -= expected_[k]; }
  [[nodiscard]] std::string waiting_for(unsigned p, std::size_t k) const;

 private:
  const world::World& world_;
  const coll::Schedule& schedule_;
  std::byte* base_;
  std::vector<ibv_sge> sges_[2];
  std::vector<ibv_send_wr> wrs_[2];
  std::vector<const verbs::QueuePair*> wr_qp_;  // by write index
  std::vector<std::uint32_t> expected_;         // arrivals per step
  std::vector<std::uint32_t> arrived_[2];       // arrivals per step, per parity
  std::uint64_t outstanding_ = 0;               // writes posted, not completed
  std::array<ibv_wc, harness::kPollBatch> wcs_{};  // one poll's completions
};

class ShmTransport {
 public:
  // Needs 2 x steps counters in the world; sets this rank's to zero, so it must be built while
  // no peer writes (between runs: the session builds it when it prepares a benchmark).
  ShmTransport(world::ShmWorld& world, const coll::Schedule& schedule, const ArenaLayout& layout);

  [[nodiscard]] std::byte* base() const noexcept { return world_.arena(); }
  int post(std::size_t w, unsigned p, std::string& error) noexcept;
  int poll(unsigned p, std::size_t k, std::string& error) noexcept;
  [[nodiscard]] std::uint64_t landed(unsigned p, std::size_t k) const noexcept {
    return counted(p, k) - consumed_[p][k];
  }
  [[nodiscard]] bool step_done(unsigned p, std::size_t k) const noexcept { return landed(p, k) >= expected_[k]; }
  void consume(unsigned p, std::size_t k) noexcept { consumed_[p][k] += expected_[k]; }
  [[nodiscard]] std::string waiting_for(unsigned p, std::size_t k) const;

 private:
  struct Write {
    std::byte* dst[2];
    const std::byte* src[2];
    std::uint64_t bytes;
    std::atomic<std::uint64_t>* counter[2];
  };
  [[nodiscard]] std::uint64_t counted(unsigned p, std::size_t k) const noexcept {
    return world_.counter(world_.rank(), p * steps_ + k).load(std::memory_order_acquire);
  }

  world::ShmWorld& world_;
  const coll::Schedule& schedule_;
  std::uint64_t steps_;
  std::vector<Write> writes_;
  std::vector<std::uint64_t> expected_;
  std::vector<std::uint64_t> consumed_[2];
  std::uint64_t seen_ = 0;  // the awaited counter at the last poll (progress for the stall clock)
};

}  // namespace fabench::collbench
