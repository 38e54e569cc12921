// Transfer's loop (transfer.hpp): per iteration, post what fits on every lane
// (post_some), take what the CQs hold (pump), notify peers, and wait for a
// kind of notification (wait_for). Its setup is transfer_setup.cpp.
#include "fabench/kvbench/transfer.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "fabench/ctrl/heartbeat.hpp"
#include "fabench/harness/loop.hpp"
#include "fabench/harness/steps.hpp"
#include "fabench/kv/pattern.hpp"
#include "fabench/verbs/error.hpp"
#include "transfer_ids.hpp"

namespace fabench::kvbench {

using transfer_ids::kControlId;
using transfer_ids::kDone;
using transfer_ids::kDonePos;
using transfer_ids::kFree;
using transfer_ids::kHeartbeat;
using transfer_ids::kKindShift;
using transfer_ids::kReady;

namespace {

constexpr int kPollBatch = 32;
constexpr std::uint32_t kClockEveryLoops = 64;
constexpr std::uint32_t kPassiveSleepUs = 1000;
const char* kind_name(std::uint32_t k) {
  return k == kReady ? "ready" : k == kDone ? "done" : k == kFree ? "free" : "heartbeat";
}

}  // namespace

void Transfer::start_iteration() noexcept {
  for (auto& q : queues_) {
    q.posted = 0;
    q.completed = 0;
    q.done_posted = false;
    q.finished = false;
  }
  busy_queues_ = queues_.size();
  finals_left_ = finals_;  // no allocation: same size every time
  request_done_.assign(batch_, 0);
}

// Posts what fits on every lane: chains of post_list WRs, one slot kept for
// a notification; push ends each lane with its "done".
bool Transfer::post_some(std::string& error) noexcept {
  const std::size_t depth = world_.options().send_depth - 1;
  const bool push = spec_.direction == kv::Direction::kPush;
  for (auto& q : queues_) {
    if (q.finished) continue;
    while (q.posted < q.wrs.size()) {
      const std::size_t room = depth - (q.posted - q.completed);
      const std::size_t n = std::min({room, q.wrs.size() - q.posted, std::size_t{options_.post_list}});
      if (n == 0) break;
      for (std::size_t i = 0; i + 1 < n; ++i) q.wrs[q.posted + i].next = &q.wrs[q.posted + i + 1];
      q.wrs[q.posted + n - 1].next = nullptr;
      ibv_send_wr* bad = nullptr;
      if (const int rc = q.qp->post_send(q.wrs[q.posted], bad); rc != 0) [[unlikely]] {
        error = q.qp->send_error(rc, bad != nullptr ? *bad : q.wrs[q.posted]).what();
        return false;
      }
      q.posted += n;
    }
    if (push && q.posted == q.wrs.size() && !q.done_posted && q.posted - q.completed < depth) {
      q.done.imm_data = htonl(kDone << kKindShift);
      if (const int rc = q.qp->post_send(q.done); rc != 0) [[unlikely]] {
        error = q.qp->send_error(rc, q.done).what();
        return false;
      }
      q.done_posted = true;
    }
    if (!push && q.completed == q.wrs.size()) {
      q.finished = true;
      --busy_queues_;
    }
  }
  return true;
}

// Takes what the CQs hold. Returns the number of completions, -1 on error.
int Transfer::pump(std::string& error) noexcept {
  std::array<ibv_wc, kPollBatch> wcs{};
  const int nr = world_.recv_cq().poll(std::span(wcs));
  for (int i = 0; i < nr; ++i) {
    const ibv_wc& wc = wcs[i];
    const auto peer = static_cast<std::uint32_t>(wc.wr_id >> 16);
    const auto lane = static_cast<std::uint32_t>(wc.wr_id & 0xffff);
    if (wc.status != IBV_WC_SUCCESS) [[unlikely]] {
      failure(wc, fmt::format("the QP from rank {}", peer), error);
      return -1;
    }
    ++arrived_[(ntohl(wc.imm_data) >> kKindShift) & 3U];
    ibv_recv_wr wr{};
    wr.wr_id = wc.wr_id;
    if (world_.qp(peer, lane).post_recv(wr) != 0) [[unlikely]] {
      error = fmt::format("ibv_post_recv failed while reposting a receive for rank {}", peer);
      return -1;
    }
  }
  const int ns = world_.send_cq().poll(std::span(wcs));
  const bool push = spec_.direction == kv::Direction::kPush;
  for (int i = 0; i < ns; ++i) {
    const ibv_wc& wc = wcs[i];
    if (wc.wr_id == kControlId) {
      --control_outstanding_;
    }
    if (wc.status != IBV_WC_SUCCESS) [[unlikely]] {
      failure(wc, {}, error);
      return -1;
    }
    if (wc.wr_id == kControlId) continue;
    Queue& q = queues_[wc.wr_id >> 32];
    const auto pos = static_cast<std::uint32_t>(wc.wr_id & 0xffffffffULL);
    if (pos == kDonePos) {
      q.finished = true;
      --busy_queues_;
      continue;
    }
    q.completed = std::size_t{pos} + 1;
    if (q.final[pos] != 0 && --finals_left_[q.request[pos]] == 0) request_done_[q.request[pos]] = harness::now_ns();
    if (!push && q.completed == q.wrs.size() && !q.finished) {
      q.finished = true;
      --busy_queues_;
    }
  }
  if (nr < 0 || ns < 0) [[unlikely]] {
    error = "ibv_poll_cq failed";
    return -1;
  }
  return nr + ns;
}

// The one line of a failed completion: a flush only says that its QP broke;
// the send CQ may hold why (say, retries exceeded), which is reported instead
// (harness::first_failure). `qp`: how to name the QP of a receive; a send
// completion's QP is named from its wr_id.
void Transfer::failure(const ibv_wc& failed, const std::string& qp, std::string& error) noexcept {
  try {
    const ibv_wc wc = harness::first_failure(world_.send_cq(), failed);
    const bool received = wc.wr_id == failed.wr_id && !qp.empty();
    const std::string name = received                ? qp
                             : wc.wr_id == kControlId ? std::string("a notification QP")
                             : wc.wr_id >> 32 < queues_.size()
                                 ? fmt::format("the QP to rank {}", queues_[wc.wr_id >> 32].peer)
                                 : fmt::format("qp 0x{:x}", wc.qp_num);
    error = harness::failure_text(wc, name);
  } catch (...) {
    error = "a completion failed";
  }
}

// A zero-byte write with immediate to each of `peers`, on lane 0.
bool Transfer::notify(std::span<const std::uint32_t> peers, std::uint32_t kind, std::uint32_t iteration,
                      std::string& error) noexcept {
  for (const auto peer : peers) {
    ibv_send_wr wr{};
    wr.wr_id = kControlId;
    wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    wr.num_sge = 0;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.imm_data = htonl((kind << kKindShift) | (iteration & ((1U << kKindShift) - 1)));
    wr.wr.rdma.remote_addr = world_.remote(peer).addr;
    wr.wr.rdma.rkey = world_.remote(peer).rkey;
    if (const int rc = world_.qp(peer).post_send(wr); rc != 0) [[unlikely]] {
      error = world_.qp(peer).send_error(rc, wr).what();
      return false;
    }
    ++control_outstanding_;
  }
  return true;
}

// Every heartbeat_ns_ of posting (a second; a quarter of the waiter's stall
// below 4 s, as ctrl::keepalive_interval), when the last heartbeat has completed. The coarse
// clock is read in user space (vDSO) whatever the clocksource; CLOCK_MONOTONIC
// can be a system call (a guest's HPET), made here every kClockEveryLoops.
bool Transfer::heartbeat(std::string& error) noexcept {
  const std::uint64_t t = harness::coarse_now_ns();
  if (t - last_heartbeat_ < heartbeat_ns_ || control_outstanding_ != 0) return true;
  last_heartbeat_ = t;
  return notify(targets_, kHeartbeat, 0, error);
}

// Polls until `count` immediates of `kind` have arrived (and, with
// sends_too, every lane has finished and every notification completed).
bool Transfer::wait_for(std::uint32_t kind, std::uint64_t count, bool sends_too, world::Waiter& waiter,
                        TransferResult& r, const char* what) {
  for (std::uint32_t loops = 0;; ++loops) {
    if (sends_too && !post_some(r.error)) return false;
    if (sends_too && loops % kClockEveryLoops == 0 && !heartbeat(r.error)) return false;
    const bool sends_done = !sends_too || (busy_queues_ == 0 && control_outstanding_ == 0);
    if (arrived_[kind] >= count && sends_done) return true;
    int n = pump(r.error);
    if (n == 0 && !sends_too && world_.recv_cq().has_channel()) {
      // Only a notification can end this wait: block for it (10 ms at a time,
      // so that the watch still runs), leaving the cores to the poster.
      if (world_.recv_cq().arm() != 0) [[unlikely]] {
        r.error = "ibv_req_notify_cq failed";
        return false;
      }
      n = pump(r.error);
      if (n == 0 && world_.recv_cq().wait_event(10) < 0) [[unlikely]] {
        r.error = "waiting for a completion event failed";
        return false;
      }
    }
    if (n < 0) return false;
    if (n > 0) {
      waiter.progress();
      continue;
    }
    const auto verdict = waiter.idle();
    if (verdict == world::Waiter::Verdict::kGoOn) continue;
    if (verdict == world::Waiter::Verdict::kControl) {
      r.closed_channel = waiter.channel_closed() ? static_cast<int>(waiter.channel_index()) : -1;
      r.error = fmt::format("stopped while {}", what);
    } else {
      std::size_t done = 0;
      std::size_t total = 0;
      for (const auto& q : queues_) {
        done += q.completed;
        total += q.wrs.size();
      }
      r.error = fmt::format("no progress for {} s while {}: {} of {} '{}' notifications, {} of {} WRs completed",
                            std::chrono::duration_cast<std::chrono::seconds>(waiter.stall()).count(), what,
                            arrived_[kind], count, kind_name(kind), done, total);
    }
    return false;
  }
}

// The initiator's times of the iteration that began at t0_.
void Transfer::record(TransferResult& r) const {
  const std::uint64_t t1 = harness::now_ns();
  r.iteration_seconds.push_back(static_cast<double>(t1 - t0_) / 1e9);
  for (const auto t : request_done_) r.request_seconds.push_back(static_cast<double>((t != 0 ? t : t1) - t0_) / 1e9);
}

// One iteration, this rank's part of it (transfer.hpp); false (r.error set) on a failure.
bool Transfer::run_iteration(std::uint64_t it, world::Waiter& waiter, world::Waiter& passive, TransferResult& r) {
  const auto iter = static_cast<std::uint32_t>(it);
  const bool push = spec_.direction == kv::Direction::kPush;
  const bool decode = side_ == kv::Side::kDecode;
  const std::span<const std::byte> pool(world_.arena().data(), pool_bytes_);
  start_iteration();
  bool ok = true;
  if (push && decode) {
    poison();
    ok = notify(notify_, kReady, iter, r.error) &&
         wait_for(kDone, expected_done_ * (it + 1), false, passive, r, "waiting for the prefill ranks' writes");
    if (ok) r.wrong_pages += kv::count_wrong_pages(spec_, side_, side_rank_, pool);
  } else if (push) {
    ok = wait_for(kReady, expected_ready_ * (it + 1), false, passive, r, "waiting for the decode ranks' ready");
    t0_ = harness::now_ns();
    ok = ok && wait_for(kDone, 0, true, waiter, r, "writing the KV cache");
    if (ok && initiator()) record(r);
  } else if (decode) {
    poison();
    t0_ = harness::now_ns();
    ok = wait_for(kFree, 0, true, waiter, r, "reading the KV cache");
    if (ok) {
      record(r);
      r.wrong_pages += kv::count_wrong_pages(spec_, side_, side_rank_, pool);
      ok = notify(notify_, kFree, iter, r.error);
    }
  } else {
    ok = wait_for(kFree, expected_free_ * (it + 1), false, passive, r, "waiting for the decode ranks' reads");
  }
  return ok;
}

TransferResult Transfer::run(std::uint64_t iterations, const world::Watch& watch) {
  TransferResult r;
  world::Waiter waiter(watch);
  // Waiting for the other side's notification: block on the receive CQ's
  // events (wait_for), else sleep between polls.
  world::Watch passive_watch = watch;
  passive_watch.spin_before_yield = 0;
  passive_watch.idle_sleep_us = world_.recv_cq().has_channel() ? 0 : kPassiveSleepUs;
  world::Waiter passive(passive_watch);
  std::fill(std::begin(arrived_), std::end(arrived_), 0);
  last_heartbeat_ = harness::coarse_now_ns();
  // The peer that waits runs with the same --timeout (its stall) as this one.
  heartbeat_ns_ = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(ctrl::keepalive_interval(watch.stall)).count());
  r.wrs = wrs_;
  r.bytes = bytes_;
  if (initiator()) {
    r.iteration_seconds.reserve(iterations);
    r.request_seconds.reserve(iterations * batch_);
  }
  for (std::uint64_t it = 0; it < iterations; ++it) {
    if (!run_iteration(it, waiter, passive, r)) {
      r.ok = false;
      return r;
    }
  }
  busy_queues_ = 0;
  if (!wait_for(kReady, 0, true, waiter, r, "finishing the notifications")) r.ok = false;
  return r;
}

}  // namespace fabench::kvbench
