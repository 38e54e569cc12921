// measure_pair(): one end of a pair's bandwidth and latency tests (measure.hpp).
#include "fabench/acceptbench/measure.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>

#include <arpa/inet.h>

#include <fmt/format.h>

#include "fabench/harness/counters.hpp"
#include "fabench/harness/loop.hpp"
#include "fabench/harness/stats.hpp"

namespace fabench::acceptbench {

namespace {

using accept::Attempt;
using accept::Status;
using harness::now_ns;

constexpr std::uint32_t kLatWarmup = 16;
constexpr std::uint64_t kStepWrId = ~0ULL;
constexpr std::uint64_t kPingWrId = ~0ULL - 1;

// Why a phase ended early: set once, the measurement stops there.
struct Stop {
  Status status = Status::kOk;
  std::string reason;
  [[nodiscard]] bool stopped() const { return status != Status::kOk; }
};

class Runner {
 public:
  Runner(PairLink& link, Side side, const PairPlan& plan) : link_(link), side_(side), plan_(plan) {
    watch_.stall = plan.stall;
    watch_.spin_before_yield = plan.spin_before_yield;
    watch_.limit_ns = now_ns() + static_cast<std::uint64_t>(plan.limit_s * 1e9);
  }

  // The checks of every wait (harness::Watchdog): no progress for the stall, or the pair's time
  // is up. Yields the CPU after spin_before_yield empty polls in a row (when ranks outnumber
  // cores, a spinning rank would take the core its partner or the software device needs).
  bool stuck(harness::Watchdog& dog, std::uint64_t progress, bool idle, const char* what) {
    if (idle) {
      dog.pause();
    } else {
      dog.busy();
    }
    if (!dog.stalled(progress)) return false;
    if (dog.limit_reached()) {
      return !fail(Status::kTimeout,
                   fmt::format("timeout: {}: the pair ran past its limit of {:.0f} s", what, plan_.limit_s));
    }
    return !fail(Status::kTimeout,
                 fmt::format("timeout: {}: nothing from {} for {:.0f} s", what, plan_.partner, dog.stall_seconds()));
  }

  // A symmetric barrier: sends step `n`, waits for the partner's step `n`. The partner's steps
  // arrive in order and may run one ahead (it passes step n as soon as ours arrives and, with
  // nothing to do in the phase, sends n + 1 at once).
  bool step(std::uint32_t n, const char* what) {
    ibv_send_wr wr{};
    wr.wr_id = kStepWrId;
    wr.opcode = IBV_WR_SEND_WITH_IMM;
    wr.imm_data = htonl(n);
    wr.send_flags = IBV_SEND_SIGNALED;
    if (const int rc = link_.qp(0).post_send(wr); rc != 0) throw link_.qp(0).send_error(rc, wr);
    ++unreaped_sends_;
    harness::Watchdog dog(watch_);
    std::uint64_t progress = 0;
    while (heard_ < n || unreaped_sends_ > 0) {
      std::array<ibv_wc, 16> wcs{};
      int got = link_.recv_cq().poll(wcs);
      if (got < 0) return fail(Status::kFailed, fmt::format("{}: polling the receive CQ failed", what));
      const bool heard_any = got > 0;
      for (int i = 0; i < got; ++i) {
        if (!check(wcs[i], what)) return false;
        link_.repost_step_receive();
        const std::uint32_t m = ntohl(wcs[i].imm_data);
        if (m != heard_ + 1) {
          return fail(Status::kFailed,
                      fmt::format("{}: step {} from {} after its step {}", what, m, plan_.partner, heard_));
        }
        heard_ = m;
      }
      progress += static_cast<std::uint64_t>(got);
      got = reap_sends(what);
      if (got < 0) return false;
      progress += static_cast<std::uint64_t>(got);
      if (stuck(dog, progress, !heard_any && got == 0, what)) return false;
    }
    return true;
  }

  // Streams writes for plan.seconds over every lane; the rate (Gb/s) of what completed, per lane
  // too. NaN after a failure.
  double stream(const char* what, std::vector<double>* per_lane) {
    const LinkOptions& o = link_.options();
    const std::uint32_t lanes = o.lanes;
    std::vector<std::uint32_t> in_flight(lanes, 0);
    std::vector<std::uint64_t> done(lanes, 0);
    ibv_sge sge = link_.arena().sge(PairLink::kBwOffset, static_cast<std::uint32_t>(o.bw_bytes));
    ibv_send_wr wr{};
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = link_.remote_addr() + PairLink::kBwOffset;
    wr.wr.rdma.rkey = link_.remote_rkey();
    harness::Watchdog dog(watch_);
    const std::uint64_t t0 = now_ns();
    const std::uint64_t t_end = t0 + static_cast<std::uint64_t>(plan_.seconds * 1e9);
    std::uint64_t t_last = t0;
    std::uint64_t completions = 0;
    std::uint32_t total_in_flight = 0;
    std::uint32_t next_lane = 0;
    std::array<ibv_wc, 32> wcs{};
    for (;;) {
      const std::uint64_t t = now_ns();
      if (t < t_end) {
        for (std::uint32_t k = 0; k < lanes; ++k) {
          const std::uint32_t lane = (next_lane + k) % lanes;
          if (in_flight[lane] >= o.depth) continue;
          wr.wr_id = lane;
          if (const int rc = link_.qp(lane).post_send(wr); rc != 0) throw link_.qp(lane).send_error(rc, wr);
          ++in_flight[lane];
          ++total_in_flight;
        }
        next_lane = (next_lane + 1) % lanes;
      } else if (total_in_flight == 0) {
        break;
      }
      const int got = link_.send_cq().poll(wcs);
      if (got < 0) return fail_nan(Status::kFailed, fmt::format("{}: polling the send CQ failed", what));
      for (int i = 0; i < got; ++i) {
        if (!check(wcs[i], what)) return accept::kNotMeasured;
        const auto lane = static_cast<std::uint32_t>(wcs[i].wr_id);
        --in_flight[lane];
        --total_in_flight;
        done[lane] += o.bw_bytes;
        t_last = now_ns();
      }
      completions += static_cast<std::uint64_t>(got);
      if (stuck(dog, completions, got == 0, what)) return accept::kNotMeasured;
    }
    const double secs = static_cast<double>(t_last - t0) / 1e9;
    if (secs <= 0) return accept::kNotMeasured;
    std::uint64_t total = 0;
    for (std::uint32_t lane = 0; lane < lanes; ++lane) {
      total += done[lane];
      if (per_lane != nullptr && lanes > 1) per_lane->push_back(static_cast<double>(done[lane]) * 8 / secs / 1e9);
    }
    return static_cast<double>(total) * 8 / secs / 1e9;
  }

  // Ping-pong of 2-byte writes on lane 0. Side A returns the half round trips (us); side B
  // answers. False after a failure.
  bool ping_pong(std::vector<double>& half_rtt_us) {
    const char* what = "latency";
    volatile auto* slot = reinterpret_cast<volatile std::uint16_t*>(link_.arena().data() + PairLink::kPingOffset);
    auto* source = reinterpret_cast<std::uint16_t*>(link_.arena().data() + PairLink::kPongSourceOffset);
    ibv_sge sge = link_.arena().sge(PairLink::kPongSourceOffset, 2);
    ibv_send_wr wr{};
    wr.wr_id = kPingWrId;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.send_flags = IBV_SEND_SIGNALED | (link_.inline_threshold() >= 2 ? IBV_SEND_INLINE : 0);
    wr.wr.rdma.remote_addr = link_.remote_addr() + PairLink::kPingOffset;
    wr.wr.rdma.rkey = link_.remote_rkey();
    auto send = [&](std::uint16_t v) {
      *source = v;
      if (const int rc = link_.qp(0).post_send(wr); rc != 0) throw link_.qp(0).send_error(rc, wr);
      ++unreaped_sends_;
    };
    // Waits until the partner's write of `v` lands in our slot, reaping our own writes.
    auto await = [&](std::uint16_t v) {
      harness::Watchdog dog(watch_);
      std::uint64_t progress = 0;
      while (*slot != v) {
        const int got = reap_sends(what);
        if (got < 0) return false;
        progress += static_cast<std::uint64_t>(got);
        if (stuck(dog, progress, true, what)) return false;
      }
      std::atomic_thread_fence(std::memory_order_acquire);
      return true;
    };
    const std::uint32_t total = kLatWarmup + plan_.lat_iters;
    half_rtt_us.reserve(plan_.lat_iters);
    for (std::uint32_t i = 1; i <= total; ++i) {
      const auto v = static_cast<std::uint16_t>(i);
      while (unreaped_sends_ + 1 > link_.options().depth) {
        if (reap_sends(what) < 0) return false;
      }
      if (side_ == Side::kA) {
        const std::uint64_t t0 = now_ns();
        send(v);
        if (!await(v)) return false;
        if (i > kLatWarmup) half_rtt_us.push_back(static_cast<double>(now_ns() - t0) / 2e3);
      } else {
        if (!await(v)) return false;
        send(v);
      }
    }
    return true;
  }

  // Takes send completions; how many, or -1 after a failed one.
  int reap_sends(const char* what) {
    std::array<ibv_wc, 16> wcs{};
    const int got = link_.send_cq().poll(wcs);
    if (got < 0) {
      fail(Status::kFailed, fmt::format("{}: polling the send CQ failed", what));
      return -1;
    }
    for (int i = 0; i < got; ++i) {
      if (!check(wcs[i], what)) return -1;
      --unreaped_sends_;
    }
    return got;
  }

  bool check(const ibv_wc& wc, const char* what) {
    if (wc.status == IBV_WC_SUCCESS) return true;
    // Retry exhaustion is what a dead or unreachable partner looks like on RC.
    const bool gone = wc.status == IBV_WC_RETRY_EXC_ERR || wc.status == IBV_WC_RNR_RETRY_EXC_ERR;
    return fail(gone ? Status::kTimeout : Status::kFailed,
                fmt::format("{}{}: work completion {} on the QP to {}", gone ? "timeout: " : "", what,
                            ibv_wc_status_str(wc.status), plan_.partner));
  }

  bool fail(Status s, std::string reason) {
    if (!stop_.stopped()) stop_ = Stop{s, std::move(reason)};
    return false;
  }
  double fail_nan(Status s, std::string reason) {
    fail(s, std::move(reason));
    return accept::kNotMeasured;
  }
  [[nodiscard]] const Stop& stop() const { return stop_; }

 private:
  PairLink& link_;
  Side side_;
  const PairPlan& plan_;
  std::uint32_t unreaped_sends_ = 0;
  std::uint32_t heard_ = 0;  // the partner's last step
  harness::Watch watch_;     // every wait's: the stall, the yield policy, the pair's limit
  Stop stop_;
};

void latency_stats(std::vector<double>& us, Attempt& out) {
  if (us.empty()) return;
  const harness::Stats s = harness::compute_stats_in_place(us);
  out.lat_p50_us = s.p50;
  out.lat_p99_us = s.p99;
  out.lat_max_us = s.max;
}

}  // namespace

Attempt measure_pair(PairLink& link, Side side, const PairPlan& plan, const std::string& device, std::uint8_t port) {
  Attempt out;
  out.qps = link.options().lanes;
  const bool a = side == Side::kA;
  const harness::Counters before = harness::read_port_counters(device, port);
  const std::uint64_t t0 = now_ns();
  Runner r(link, side, plan);
  double& mine = a ? out.bw_a_to_b_gbps : out.bw_b_to_a_gbps;
  std::vector<double>& lanes = a ? out.lanes_a_to_b_gbps : out.lanes_b_to_a_gbps;
  std::vector<double> lat;
  const bool ok = r.step(1, "start") &&                                              //
                  (!a || !std::isnan(mine = r.stream("bandwidth A->B", &lanes))) &&  //
                  r.step(2, "bandwidth A->B") &&                                     //
                  (a || !std::isnan(mine = r.stream("bandwidth B->A", &lanes))) &&   //
                  r.step(3, "bandwidth B->A") &&                                     //
                  !std::isnan(out.bw_bidir_gbps = r.stream("bidirectional bandwidth", nullptr)) &&
                  r.step(4, "bidirectional bandwidth") && r.ping_pong(lat) && r.step(5, "latency");
  if (a) latency_stats(lat, out);
  out.duration_s = static_cast<double>(now_ns() - t0) / 1e9;
  if (!ok) {
    out.status = r.stop().status == Status::kOk ? Status::kFailed : r.stop().status;
    out.reason = r.stop().reason.empty() ? "stopped without a reason" : r.stop().reason;
  }
  (a ? out.counters_a : out.counters_b) = harness::counter_deltas(before, harness::read_port_counters(device, port));
  return out;
}

Attempt combine(const Attempt* a, const Attempt* b, std::uint32_t qps, double duration_s,
                const std::string& missing_reason) {
  Attempt out;
  out.qps = qps;
  out.duration_s = duration_s;
  auto worse = [&out](const Attempt* h, const char* side) {
    if (h == nullptr || h->status == Status::kOk) return;
    const bool replace = out.status == Status::kOk || (h->status == Status::kTimeout && out.status != Status::kTimeout);
    if (replace) {
      out.status = h->status;
      out.reason = fmt::format("{}: {}", side, h->reason);
    }
  };
  if (a != nullptr) {
    out.bw_a_to_b_gbps = a->bw_a_to_b_gbps;
    out.lanes_a_to_b_gbps = a->lanes_a_to_b_gbps;
    out.lat_p50_us = a->lat_p50_us;
    out.lat_p99_us = a->lat_p99_us;
    out.lat_max_us = a->lat_max_us;
    out.counters_a = a->counters_a;
  }
  if (b != nullptr) {
    out.bw_b_to_a_gbps = b->bw_b_to_a_gbps;
    out.lanes_b_to_a_gbps = b->lanes_b_to_a_gbps;
    out.counters_b = b->counters_b;
  }
  if (a != nullptr && b != nullptr) out.bw_bidir_gbps = a->bw_bidir_gbps + b->bw_bidir_gbps;
  if (a == nullptr || b == nullptr) {
    out.status = Status::kTimeout;
    out.reason = missing_reason;
  } else {
    worse(a, "A");
    worse(b, "B");
  }
  return out;
}

}  // namespace fabench::acceptbench
