#include "fabench/collbench/transport.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fabench/base/error.hpp"
#include "fabench/harness/loop.hpp"
#include "fabench/verbs/error.hpp"
#include "fabench/world/poll.hpp"

namespace fabench::collbench {

namespace {

constexpr std::uint64_t kAlign = 64;
constexpr std::uint32_t kParityBit = 1U << 31;

std::uint64_t align_up(std::uint64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

template <class T>
std::vector<T> expected_arrivals(const coll::Schedule& s) {
  std::vector<T> out(s.num_steps());
  for (std::size_t k = 0; k < s.num_steps(); ++k) out[k] = static_cast<T>(s.step(k).expect_from.size());
  return out;
}

}  // namespace

ArenaLayout ArenaLayout::of(const coll::Schedule& s) {
  ArenaLayout l;
  std::uint64_t at = 0;
  l.input = at;
  at += align_up(s.input_bytes);
  for (auto& o : l.output) {
    o = at;
    at += align_up(s.output_bytes);
  }
  for (auto& o : l.scratch) {
    o = at;
    at += align_up(s.scratch_bytes);
  }
  l.total = at;
  return l;
}

std::uint64_t ArenaLayout::offset(coll::Buf b, unsigned parity) const noexcept {
  switch (b) {
    case coll::Buf::kInput: return input;
    case coll::Buf::kOutput: return output[parity & 1U];
    case coll::Buf::kScratch: return scratch[parity & 1U];
  }
  return input;
}

// ---- RDMA: writes with immediate -------------------------------------------------------------

RdmaTransport::RdmaTransport(const world::World& world, const coll::Schedule& schedule, const ArenaLayout& layout)
    : world_(world),
      schedule_(schedule),
      base_(world.arena().data()),
      expected_(expected_arrivals<std::uint32_t>(schedule)) {
  if (layout.total > world.arena().length()) {
    throw RunError(
        fmt::format("collective needs {} bytes of arena, the world has {}", layout.total, world.arena().length()));
  }
  if (schedule.num_steps() >= kParityBit) throw RunError("too many steps for the immediate");
  const auto n = schedule.writes.size();
  wr_qp_.resize(n);
  for (unsigned p = 0; p < 2; ++p) {
    sges_[p].resize(n);
    wrs_[p].resize(n);
  }
  std::size_t w = 0;
  for (std::size_t k = 0; k < schedule.num_steps(); ++k) {
    for (const auto& t : schedule.step(k).writes) {
      if (!world.has_peer(t.dst_rank)) {
        throw RunError(fmt::format("schedule writes to rank {}, which is not a peer", t.dst_rank));
      }
      if (t.bytes > 0x7fffffffULL) throw UserError("a single write above 2 GiB");
      wr_qp_[w] = &world.qp(t.dst_rank);
      for (unsigned p = 0; p < 2; ++p) {
        sges_[p][w] = world.arena().sge(layout.offset(t.src_buf, p) + t.src_offset,
                                        static_cast<std::uint32_t>(t.bytes));
        ibv_send_wr& wr = wrs_[p][w];
        wr = ibv_send_wr{};
        wr.wr_id = w;
        wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
        wr.sg_list = &sges_[p][w];
        wr.num_sge = 1;
        wr.imm_data = htonl((p != 0 ? kParityBit : 0U) | static_cast<std::uint32_t>(k));
        wr.send_flags = static_cast<unsigned>(IBV_SEND_SIGNALED) |
                        (t.bytes <= world.inline_threshold() ? static_cast<unsigned>(IBV_SEND_INLINE) : 0U);
        wr.wr.rdma.remote_addr = world.remote(t.dst_rank).addr + layout.offset(t.dst_buf, p) + t.dst_offset;
        wr.wr.rdma.rkey = world.remote(t.dst_rank).rkey;
      }
      ++w;
    }
  }
  for (auto& a : arrived_) a.assign(schedule.num_steps(), 0);
}

void RdmaTransport::post_receives(const world::World& world) {
  for (const auto peer : world.peers()) {
    ibv_recv_wr wr{};
    wr.wr_id = peer;
    wr.num_sge = 0;  // write-with-immediate places its data itself; the receive only carries the immediate
    for (std::uint32_t i = 0; i < world.options().recv_depth; ++i) {
      if (const int rc = world.qp(peer).post_recv(wr); rc != 0) throw world.qp(peer).recv_error(rc, wr);
    }
  }
}

int RdmaTransport::post(std::size_t w, unsigned p, std::string& error) noexcept {
  if (const int rc = wr_qp_[w]->post_send(wrs_[p][w]); rc != 0) [[unlikely]] {
    error = wr_qp_[w]->send_error(rc, wrs_[p][w]).what();
    return -1;
  }
  ++outstanding_;
  return 0;
}

// Arrivals counted by (parity, step) and their receives reposted; send completions retired.
int RdmaTransport::poll(unsigned /*p*/, std::size_t /*k*/, std::string& error) noexcept {
  return world::poll_world(
      world_, std::span(wcs_), outstanding_, error,
      [&](std::uint32_t /*peer*/, std::uint32_t imm) {
        const std::uint32_t step = imm & ~kParityBit;
        if (step < arrived_[0].size()) ++arrived_[(imm & kParityBit) != 0 ? 1 : 0][step];
      },
      [&](const ibv_wc& wc) { return schedule_.writes[wc.wr_id].dst_rank; });
}

std::string RdmaTransport::waiting_for(unsigned p, std::size_t k) const {
  const auto step = schedule_.step(k);
  return fmt::format("waiting for {} of {} arrivals (from ranks {}) and {} write completions",
                     expected_[k] - std::min(expected_[k], arrived_[p][k]), expected_[k],
                     fmt::join(step.expect_from, ","), outstanding_);
}

// ---- shared memory: copy, then bump the peer's counter ---------------------------------------

ShmTransport::ShmTransport(world::ShmWorld& world, const coll::Schedule& schedule, const ArenaLayout& layout)
    : world_(world),
      schedule_(schedule),
      steps_(schedule.num_steps()),
      expected_(expected_arrivals<std::uint64_t>(schedule)) {
  if (layout.total > world.arena_bytes()) {
    throw RunError(
        fmt::format("collective needs {} bytes of arena, the world has {}", layout.total, world.arena_bytes()));
  }
  if (2 * steps_ > world.counters()) {
    throw RunError(fmt::format("collective needs {} counters, the world has {}", 2 * steps_, world.counters()));
  }
  writes_.reserve(schedule.writes.size());
  for (std::size_t k = 0; k < steps_; ++k) {
    for (const auto& t : schedule.step(k).writes) {
      if (!world.has_peer(t.dst_rank)) {
        throw RunError(fmt::format("schedule writes to rank {}, which is not a peer", t.dst_rank));
      }
      Write wr{};
      wr.bytes = t.bytes;
      for (unsigned p = 0; p < 2; ++p) {
        wr.src[p] = world.arena() + layout.offset(t.src_buf, p) + t.src_offset;
        wr.dst[p] = world.arena_of(t.dst_rank) + layout.offset(t.dst_buf, p) + t.dst_offset;
        wr.counter[p] = &world.counter(t.dst_rank, p * steps_ + k);
      }
      writes_.push_back(wr);
    }
  }
  world.reset_counters();
  for (auto& c : consumed_) c.assign(steps_, 0);
}

int ShmTransport::post(std::size_t w, unsigned p, std::string& /*error*/) noexcept {
  const Write& wr = writes_[w];
  std::memcpy(wr.dst[p], wr.src[p], wr.bytes);
  // The copy is visible to the peer before the count that announces it.
  wr.counter[p]->fetch_add(1, std::memory_order_release);
  return 0;
}

int ShmTransport::poll(unsigned p, std::size_t k, std::string& /*error*/) noexcept {
  const std::uint64_t now = counted(p, k);
  const int changed = now != seen_ ? 1 : 0;
  seen_ = now;
  return changed;
}

std::string ShmTransport::waiting_for(unsigned p, std::size_t k) const {
  const std::uint64_t got = landed(p, k);
  return fmt::format("waiting for {} of {} arrivals (from ranks {})", expected_[k] - std::min(expected_[k], got),
                     expected_[k], fmt::join(schedule_.step(k).expect_from, ","));
}

}  // namespace fabench::collbench
