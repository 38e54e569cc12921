// The victim ring tests (session.hpp): every victim runs the same number of iterations over
// the same random ring, so each iteration waits only for its neighbours' same iteration.
//   latency    8 B write with immediate to the successor and to the predecessor; the
//              iteration ends when both neighbours' iteration-i writes have landed and both
//              sends completed (GPCNeT's random-ring latency: Isend/Irecv both ways, Waitall)
//   bandwidth  8 x 128 KiB writes with immediate to the successor; the iteration ends when the
//              predecessor's 8 landed and the 8 sends completed; sample = 1 MiB / its time
#include <arpa/inet.h>

#include <array>
#include <cstring>
#include <thread>
#include <vector>

#include "fabench/harness/wait.hpp"
#include "fabench/world/poll.hpp"
#include "wait.hpp"

namespace fabench::congestbench {

namespace {

struct Ring {
  std::uint32_t next;
  std::uint32_t prev;
};

class Victim {
 public:
  Victim(const world::World& w, const Ring& ring, const world::Watch& watch)
      : w_(w), ring_(ring), waiter_(watch), arrived_(w.size(), 0) {}

  // The loaded phase is over: `seq` into every congestor's stop flag (a plain write), completed.
  bool raise_stop(const std::vector<std::uint32_t>& congestors, std::uint64_t seq, std::uint64_t flag,
                  PhaseResult& r) {
    std::memcpy(w_.arena().data() + flag + 8, &seq, sizeof seq);
    for (const std::uint32_t c : congestors) {
      if (!post(c, flag + 8, sizeof seq, flag, r, IBV_WR_RDMA_WRITE)) return false;
    }
    return detail::wait_until(
        waiter_, r, "the congestors' stop flags", [&] { return outstanding_ == 0; }, [&] { return poll(r); });
  }

  bool iterate(VictimTest test, std::uint64_t i, PhaseResult& r) {
    const bool lat = test == VictimTest::kLatency;
    const std::uint64_t bytes = lat ? kLatencyBytes : kBandwidthBytes;
    const std::uint32_t per = lat ? 1 : kBandwidthWindow;
    for (std::uint32_t k = 0; k < per; ++k) {
      if (!post(ring_.next, Layout::kSource + k * bytes, bytes, Layout::kLanding + k * bytes, r)) return false;
    }
    if (lat && !post(ring_.prev, Layout::kSource, bytes, Layout::kLanding + bytes, r)) return false;
    // Latency: one write from each neighbour (two from a ring of two); bandwidth: `per` from prev.
    const std::uint64_t from_prev = (i + 1) * per * (lat && ring_.next == ring_.prev ? 2 : 1);
    const std::uint64_t from_next = lat && ring_.next != ring_.prev ? i + 1 : 0;
    return detail::wait_until(
        waiter_, r, "the ring neighbours",
        [&] { return outstanding_ == 0 && arrived_[ring_.prev] >= from_prev && arrived_[ring_.next] >= from_next; },
        [&] { return poll(r); });
  }

 private:
  bool post(std::uint32_t peer, std::uint64_t local, std::uint64_t bytes, std::uint64_t remote_off,
            PhaseResult& r, ibv_wr_opcode opcode = IBV_WR_RDMA_WRITE_WITH_IMM) {
    ibv_sge sge = w_.arena().sge(local, static_cast<std::uint32_t>(bytes));
    ibv_send_wr wr{};
    wr.wr_id = peer;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = opcode;
    wr.send_flags = IBV_SEND_SIGNALED;
    if (bytes <= w_.inline_threshold()) wr.send_flags |= IBV_SEND_INLINE;
    wr.imm_data = htonl(w_.rank());
    wr.wr.rdma.remote_addr = w_.remote(peer).addr + remote_off;
    wr.wr.rdma.rkey = w_.remote(peer).rkey;
    if (w_.qp(peer).post_send(wr) != 0) [[unlikely]] {
      r.ok = false;
      r.error = fmt::format("ibv_post_send failed toward rank {}", peer);
      return false;
    }
    ++outstanding_;
    return true;
  }

  int poll(PhaseResult& r) {
    return world::poll_world(
        w_, wcs_, outstanding_, r.error, [&](std::uint32_t peer, std::uint32_t) { ++arrived_[peer]; },
        [](const ibv_wc& wc) { return wc.wr_id; });
  }

  const world::World& w_;
  Ring ring_;
  world::Waiter waiter_;
  std::vector<std::uint64_t> arrived_;  // writes landed, by sending rank
  std::uint64_t outstanding_ = 0;
  std::array<ibv_wc, 32> wcs_{};
};

}  // namespace

PhaseResult run_victim(const world::World& w, VictimTest test, const congest::Roles& roles, std::uint64_t seed,
                       std::uint64_t iterations, const PhaseSpec& phase, const world::Watch& watch) {
  const congest::Ring ring(roles.victims, seed, phase.round);
  Victim v(w, {ring.next_of(w.rank()), ring.prev_of(w.rank())}, watch);
  PhaseResult r;
  if (phase.ramp.count() > 0) std::this_thread::sleep_for(phase.ramp);
  r.samples.reserve(iterations);
  const double bytes = static_cast<double>(kBandwidthBytes * kBandwidthWindow);
  const std::uint64_t t0 = harness::now_ns();
  std::uint64_t t = t0;
  for (std::uint64_t i = 0; i < iterations; ++i) {
    if (!v.iterate(test, i, r)) return r;
    const std::uint64_t t1 = harness::now_ns();
    const double ns = static_cast<double>(t1 - t);
    r.samples.push_back(test == VictimTest::kLatency ? ns / 1e3 : bytes / ns);  // us, or GB/s
    t = t1;
  }
  r.seconds = static_cast<double>(t - t0) / 1e9;
  if (phase.loaded && w.rank() == roles.victims.front()) (void)v.raise_stop(roles.congestors, phase.seq, phase.flag_offset, r);
  return r;
}

}  // namespace fabench::congestbench
