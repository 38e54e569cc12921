// The victim ring tests (session.hpp). Every victim runs the same number of iterations toward
// its successor in the same random ring, and each sample depends only on the path to that
// successor (a victim behind a hot port slows itself and its predecessor, not the whole ring):
//   latency    an 8 B ping (write with immediate) to the successor, which answers with an 8 B
//              pong as soon as it sees it; one sample per round trip, half of it reported (one
//              way, as fabench-lat's write latency; GPCNeT's random-ring latency exchanges with
//              both neighbours; a round trip to one keeps it per path)
//   bandwidth  8 x 128 KiB writes with immediate to the successor; the iteration ends when all
//              8 are acknowledged; sample = 1 MiB / its time
// Before it returns, a victim has answered (latency) or taken (bandwidth) everything its
// predecessor sent in the phase, so no arrival is left for the next one. In a loaded phase each
// victim then tells the lowest victim it is done, and the lowest, once all are, raises every
// congestor's stop flag: the congestors run until the slowest victim's last sample. The
// all-reduce victim runs fabench-coll's executor over the victims (run_allreduce).
#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <thread>
#include <vector>

#include "fabench/base/error.hpp"
#include "fabench/harness/wait.hpp"
#include "fabench/world/poll.hpp"
#include "wait.hpp"

namespace fabench::congestbench {

namespace {

struct Ring {
  std::uint32_t next;
  std::uint32_t prev;
};

// Immediate data: a pong; a victim's "done" (loaded phases, to the lowest victim); else a ping
// or a bandwidth write.
constexpr std::uint32_t kPong = 1U << 31;
constexpr std::uint32_t kDone = 1U << 30;

class Victim {
 public:
  // answer: pings are answered with pongs (latency); else arrivals are only counted (bandwidth).
  Victim(const world::World& w, const Ring& ring, bool answer, const world::Watch& watch)
      : w_(w), ring_(ring), answer_pings_(answer), waiter_(watch), pongs_(w.size(), 0), pings_(w.size(), 0) {}

  // Latency: one ping to the successor and its pong back.
  bool ping(std::uint64_t i, PhaseResult& r) {
    if (!post(ring_.next, Layout::kSource, kLatencyBytes, Layout::kLanding, 0, r)) return false;
    return wait(r, "the successor's pong", [&] { return pongs_[ring_.next] >= i + 1; });
  }

  // Bandwidth: kBandwidthWindow writes to the successor, all acknowledged.
  bool stream(PhaseResult& r) {
    for (std::uint32_t k = 0; k < kBandwidthWindow; ++k) {
      const std::uint64_t off = k * kBandwidthBytes;
      if (!post(ring_.next, Layout::kSource + off, kBandwidthBytes, Layout::kLanding + off, 0, r)) return false;
    }
    return wait(r, "the successor's acknowledgements", [&] { return outstanding_ == 0; });
  }

  // The end of the phase: the predecessor's `expected` pings answered or writes taken.
  bool finish(std::uint64_t expected, PhaseResult& r) {
    return wait(r, "the predecessor's last messages",
                [&] { return outstanding_ == 0 && pings_[ring_.prev] >= expected; });
  }

  // A victim other than the lowest: tell the lowest that this one is done.
  bool report_done(std::uint32_t lowest, PhaseResult& r) {
    if (!post(lowest, Layout::kSource, 0, Layout::kLanding, kDone, r)) return false;
    return wait(r, "the acknowledgement of its done", [&] { return outstanding_ == 0; });
  }

  // The lowest victim, once `others` other victims said done: `seq` into every congestor's stop
  // flag (a plain write), completed.
  bool raise_stop(const congest::Roles& roles, std::uint64_t others, std::uint64_t seq, std::uint64_t flag,
                  PhaseResult& r) {
    if (!wait(r, "the other victims' done", [&] { return dones_ >= others; })) return false;
    dones_ -= others;
    const auto& congestors = roles.congestors;
    std::memcpy(w_.arena().data() + flag + 8, &seq, sizeof seq);
    for (const std::uint32_t c : congestors) {
      if (!post(c, flag + 8, sizeof seq, flag, 0, r, IBV_WR_RDMA_WRITE)) return false;
    }
    return wait(r, "the congestors' stop flags", [&] { return outstanding_ == 0; });
  }

 private:
  template <typename Done>
  bool wait(PhaseResult& r, const char* what, Done&& done) {
    return detail::wait_until(waiter_, r, what, done, [&] { return poll(r); });
  }

  bool post(std::uint32_t peer, std::uint64_t local, std::uint64_t bytes, std::uint64_t remote_off, std::uint32_t imm,
            PhaseResult& r, ibv_wr_opcode opcode = IBV_WR_RDMA_WRITE_WITH_IMM) {
    ibv_sge sge = w_.arena().sge(local, static_cast<std::uint32_t>(bytes));
    ibv_send_wr wr{};
    wr.wr_id = peer;
    wr.sg_list = &sge;
    wr.num_sge = bytes > 0 ? 1 : 0;
    wr.opcode = opcode;
    wr.send_flags = IBV_SEND_SIGNALED;
    if (bytes <= w_.inline_threshold()) wr.send_flags |= IBV_SEND_INLINE;
    wr.imm_data = htonl(imm);
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

  // Arrivals: a pong counts; a ping (or a bandwidth write) counts and, for latency, is answered.
  int poll(PhaseResult& r) {
    answer_ = 0;
    const int n = world::poll_world(
        w_, wcs_, outstanding_, r.error,
        [&](std::uint32_t peer, std::uint32_t imm) {
          if ((imm & kPong) != 0) {
            ++pongs_[peer];
          } else if ((imm & kDone) != 0) {
            ++dones_;
          } else {
            ++pings_[peer];
            if (answer_pings_) ++answer_;
          }
        },
        [](const ibv_wc& wc) { return wc.wr_id; });
    for (; n > 0 && answer_ > 0; --answer_) {
      if (!post(ring_.prev, Layout::kSource, kLatencyBytes, Layout::kLanding + kLatencyBytes, kPong, r)) return -1;
    }
    return n;
  }

  const world::World& w_;
  Ring ring_;
  bool answer_pings_;
  world::Waiter waiter_;
  std::vector<std::uint64_t> pongs_;  // pongs landed, by rank (the successor's)
  std::vector<std::uint64_t> pings_;  // pings or bandwidth writes landed, by rank (the predecessor's)
  std::uint32_t answer_ = 0;
  std::uint64_t dones_ = 0;  // the lowest victim: other victims done with the loaded phase
  std::uint64_t outstanding_ = 0;
  std::array<ibv_wc, 32> wcs_{};
};

// The all-reduce victim: `iterations` timed calls and one more, untimed: when the lowest victim
// has finished it, every victim has finished the timed ones (a call needs every victim's
// input), so the lowest raises the stop flags with no "done" messages (whose immediates the
// executor would take for its own). The output of the last call is checked.
void run_allreduce(collbench::Executor& exec, std::uint64_t iterations, const world::Watch& watch, PhaseResult& r) {
  for (std::uint64_t i = 0; i <= iterations; ++i) {
    const collbench::ExecResult e = exec.run(1, watch);
    if (!e.ok) {
      r.ok = false;
      r.error = e.error;
      r.control_event = e.control_event;
      r.channel_closed = e.channel_closed;
      r.channel_index = e.channel_index;
      return;
    }
    if (i < iterations) r.samples.push_back(e.seconds * 1e6);
    r.seconds += e.seconds;
  }
  const std::uint64_t n = exec.schedule().nranks;
  const auto expected = static_cast<float>(n * (n + 1) / 2);  // sum of index + 1: exact in f32
  std::array<float, kAllReduceFloats> out{};
  std::memcpy(out.data(), exec.last_output(), sizeof out);
  for (const float x : out) r.wrong += x != expected ? 1 : 0;
}

}  // namespace

coll::Schedule victims_allreduce(const congest::Roles& roles, std::uint32_t rank) {
  const auto& v = roles.victims;
  const auto me = static_cast<std::uint32_t>(std::find(v.begin(), v.end(), rank) - v.begin());
  if (me == v.size()) throw RunError(fmt::format("fabench-congest: rank {} is not a victim", rank));
  coll::Schedule s = coll::build_schedule(coll::Collective::kAllReduce, coll::Algorithm::kRecursiveDoubling,
                                          static_cast<std::uint32_t>(v.size()), me, kAllReduceFloats, sizeof(float));
  for (auto& t : s.writes) t.dst_rank = v.at(t.dst_rank);  // victim index -> world rank
  for (auto& from : s.expect_from) from = v.at(from);
  return s;
}

std::unique_ptr<collbench::Executor> make_allreduce(const world::World& w, const congest::Roles& roles) {
  coll::Schedule s = victims_allreduce(roles, w.rank());
  const auto index = static_cast<float>(s.rank);
  auto exec = std::make_unique<collbench::Executor>(w, std::move(s), coll::DType::kF32, coll::ReduceOp::kSum,
                                                    collbench::ExecOptions{});
  const std::array<float, kAllReduceFloats> in{index + 1, index + 1};
  std::memcpy(exec->input(), in.data(), sizeof in);
  return exec;
}

PhaseResult run_victim(const world::World& w, VictimTest test, const congest::Roles& roles, std::uint64_t seed,
                       std::uint64_t iterations, const PhaseSpec& phase, const world::Watch& watch,
                       collbench::Executor* allreduce) {
  const congest::Ring ring(roles.victims, seed, phase.round);
  const bool lat = test == VictimTest::kLatency;
  Victim v(w, {ring.next_of(w.rank()), ring.prev_of(w.rank())}, lat, watch);
  PhaseResult r;
  if (phase.ramp.count() > 0) std::this_thread::sleep_for(phase.ramp);
  r.samples.reserve(iterations);
  const std::uint32_t lowest = roles.victims.front();
  if (test == VictimTest::kAllReduce) {
    run_allreduce(*allreduce, iterations, watch, r);
    if (r.ok && phase.loaded && w.rank() == lowest) (void)v.raise_stop(roles, 0, phase.seq, phase.flag_offset, r);
    return r;
  }
  const double bytes = static_cast<double>(kBandwidthBytes * kBandwidthWindow);
  const std::uint64_t t0 = harness::now_ns();
  std::uint64_t t = t0;
  for (std::uint64_t i = 0; i < iterations; ++i) {
    if (!(lat ? v.ping(i, r) : v.stream(r))) return r;
    const std::uint64_t t1 = harness::now_ns();
    const double ns = static_cast<double>(t1 - t);
    r.samples.push_back(lat ? ns / 2e3 : bytes / ns);  // us one way, or GB/s
    t = t1;
  }
  r.seconds = static_cast<double>(t - t0) / 1e9;
  if (!v.finish(lat ? iterations : iterations * kBandwidthWindow, r)) return r;
  if (phase.loaded) {
    const std::uint64_t others = roles.victims.size() - 1;
    (void)(w.rank() == lowest ? v.raise_stop(roles, others, phase.seq, phase.flag_offset, r)
                              : v.report_done(lowest, r));
  }
  return r;
}

}  // namespace fabench::congestbench
