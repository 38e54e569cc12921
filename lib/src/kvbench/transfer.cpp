#include "fabench/kvbench/transfer.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "fabench/base/error.hpp"
#include "fabench/ctrl/heartbeat.hpp"
#include "fabench/harness/loop.hpp"
#include "fabench/kv/pattern.hpp"
#include "fabench/verbs/error.hpp"

namespace fabench::kvbench {

namespace {

constexpr int kPollBatch = 32;
constexpr std::uint32_t kKindShift = 30;
constexpr std::uint32_t kHeartbeat = 0;  // poster -> waiter: still posting
constexpr std::uint32_t kReady = 1;  // decode -> prefill (push): my pool is poisoned, write
constexpr std::uint32_t kDone = 2;   // prefill -> decode (push): every write of the iteration is before this
constexpr std::uint32_t kFree = 3;   // decode -> prefill (pull): I have read and checked your pages
constexpr std::uint64_t kControlId = ~std::uint64_t{0};
constexpr std::uint32_t kDonePos = 0xffffffffU;
constexpr std::uint32_t kClockEveryLoops = 64;
constexpr std::uint32_t kPassiveSleepUs = 1000;
const char* kind_name(std::uint32_t k) {
  return k == kReady ? "ready" : k == kDone ? "done" : k == kFree ? "free" : "heartbeat";
}

std::uint32_t world_rank(kv::Side side, std::uint32_t side_rank, const kv::KvSpec& s) {
  return side == kv::Side::kPrefill ? side_rank : s.prefill_tp + side_rank;
}

}  // namespace

ctrl::Record TransferResult::to_record() const {
  ctrl::Record r;
  r.set_u64("wrong_pages", wrong_pages)
      .set_u64("wrs", wrs)
      .set_u64("bytes", bytes)
      .set_list("iteration_seconds", iteration_seconds)
      .set_list("request_seconds", request_seconds);
  return r;
}

TransferResult TransferResult::from_record(const ctrl::Record& r) {
  TransferResult out;
  out.wrong_pages = r.u64("wrong_pages");
  out.wrs = r.u64("wrs");
  out.bytes = r.u64("bytes");
  out.iteration_seconds = r.list("iteration_seconds");
  out.request_seconds = r.list("request_seconds");
  // n iterations of `batch` requests each: request_seconds is n x batch.
  const std::size_t n = out.iteration_seconds.size();
  if (n == 0 ? !out.request_seconds.empty() : out.request_seconds.size() % n != 0) {
    throw ctrl::RecordError(fmt::format("a result of {} request times for {} iterations (expected a multiple)",
                                        out.request_seconds.size(), n));
  }
  return out;
}

world::RankReport TransferResult::to_report() const {
  world::RankReport out;
  out.ok = ok;
  out.error = error;
  out.closed_channel = closed_channel;
  out.record = to_record();
  return out;
}

TransferResult TransferResult::from_report(const world::RankReport& r) {
  TransferResult out;
  try {
    out = from_record(r.record);
  } catch (const ctrl::RecordError& e) {
    out = TransferResult{};
    out.ok = false;
    out.error = r.ok ? e.what() : r.error;
    out.closed_channel = r.closed_channel;
    return out;
  }
  out.ok = r.ok;
  out.error = r.error;
  out.closed_channel = r.closed_channel;
  return out;
}

Transfer::Transfer(const world::World& world, const kv::KvSpec& spec, std::span<const kv::PairPlan> plans,
                   const TransferOptions& options)
    : world_(world),
      spec_(spec),
      options_(options),
      side_(world.rank() < spec.prefill_tp ? kv::Side::kPrefill : kv::Side::kDecode),
      side_rank_(side_ == kv::Side::kPrefill ? world.rank() : world.rank() - spec.prefill_tp),
      batch_(spec.batch),
      pool_bytes_(kv::pool_bytes(spec, side_, side_rank_)) {
  if (world.size() != spec.prefill_tp + spec.decode_tp) {
    throw UserError(fmt::format("prefill TP {} + decode TP {} needs {} ranks, the world has {}", spec.prefill_tp,
                                spec.decode_tp, spec.prefill_tp + spec.decode_tp, world.size()));
  }
  if (pool_bytes_ > world.arena().length()) {
    throw UserError(fmt::format("the pool needs {} bytes, the arena has {}", pool_bytes_, world.arena().length()));
  }
  const bool push = spec.direction == kv::Direction::kPush;
  const std::uint32_t me = world.rank();
  finals_.assign(batch_, 0);
  for (const auto& p : plans) {
    const std::uint32_t local = world_rank(push ? kv::Side::kPrefill : kv::Side::kDecode, p.local_rank(), spec);
    const std::uint32_t remote = world_rank(push ? kv::Side::kDecode : kv::Side::kPrefill, p.remote_rank(), spec);
    if (local == me) {
      for (std::uint32_t lane = 0; lane < world.lanes(); ++lane) build_queue(p, lane);
      if (std::find(targets_.begin(), targets_.end(), remote) == targets_.end()) targets_.push_back(remote);
      wrs_ += p.wrs.size();
      bytes_ += p.bytes;
      if (push) ++expected_ready_;
      else notify_.push_back(remote);
    } else if (remote == me) {
      if (push) {
        expected_done_ += world.lanes();
        notify_.push_back(local);
      } else {
        ++expected_free_;
      }
    }
  }
}

void Transfer::build_queue(const kv::PairPlan& plan, std::uint32_t lane) {
  const bool push = plan.direction == kv::Direction::kPush;
  const std::uint32_t peer = world_rank(push ? kv::Side::kDecode : kv::Side::kPrefill, plan.remote_rank(), spec_);
  if (!world_.has_peer(peer)) throw RunError(fmt::format("rank {} is not a peer", peer));
  Queue q;
  q.qp = &world_.qp(peer, lane);
  q.peer = peer;
  const std::uint32_t lanes = world_.lanes();
  const auto& remote = world_.remote(peer);
  const std::uint32_t sig =
      std::max<std::uint32_t>(1, std::min(options_.signal_every, world_.options().send_depth / 2));
  std::size_t nsge = 0;
  for (std::size_t w = lane; w < plan.wrs.size(); w += lanes) nsge += plan.wrs[w].segment_count;
  q.sges.reserve(nsge);
  for (std::uint32_t r = 0; r < batch_; ++r) {
    std::size_t last = plan.wrs.size();
    for (std::size_t w = plan.request_first_wr[r]; w < plan.request_first_wr[r + 1]; ++w) {
      if (w % lanes != lane) continue;
      const kv::Wr& src = plan.wrs[w];
      if (src.segment_count > world_.max_send_sge()) {
        throw UserError(fmt::format("a WR of {} SGEs; the QPs allow {}", src.segment_count, world_.max_send_sge()));
      }
      const std::size_t first = q.sges.size();
      for (const auto& seg : plan.local(src)) {
        q.sges.push_back(world_.arena().sge(seg.offset, static_cast<std::uint32_t>(seg.length)));
      }
      ibv_send_wr wr{};
      wr.wr_id = first;  // the SGE index for now; set below once the vectors stop moving
      wr.opcode = push ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
      wr.num_sge = static_cast<int>(src.segment_count);
      wr.wr.rdma.remote_addr = remote.addr + src.remote_offset;
      wr.wr.rdma.rkey = remote.rkey;
      q.wrs.push_back(wr);
      q.request.push_back(r);
      q.final.push_back(0);
      last = q.wrs.size() - 1;
    }
    if (last != plan.wrs.size()) {
      q.final[last] = 1;
      ++finals_[r];
    }
  }
  const auto qi = static_cast<std::uint64_t>(queues_.size());
  for (std::size_t i = 0; i < q.wrs.size(); ++i) {
    ibv_send_wr& wr = q.wrs[i];
    wr.sg_list = &q.sges[wr.wr_id];
    wr.wr_id = (qi << 32) | i;
    const bool signaled = q.final[i] != 0 || (i + 1) % sig == 0 || i + 1 == q.wrs.size();
    wr.send_flags = signaled ? static_cast<unsigned>(IBV_SEND_SIGNALED) : 0U;
  }
  q.done.wr_id = (qi << 32) | kDonePos;
  q.done.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  q.done.num_sge = 0;
  q.done.send_flags = IBV_SEND_SIGNALED;
  q.done.wr.rdma.remote_addr = remote.addr;
  q.done.wr.rdma.rkey = remote.rkey;
  queues_.push_back(std::move(q));
}

void Transfer::post_receives(const world::World& world) {
  for (const auto peer : world.peers()) {
    for (std::uint32_t lane = 0; lane < world.lanes(); ++lane) {
      ibv_recv_wr wr{};
      wr.wr_id = (std::uint64_t{peer} << 16) | lane;
      wr.num_sge = 0;  // zero-byte writes with immediate: the receive only carries the immediate
      for (std::uint32_t i = 0; i < world.options().recv_depth; ++i) {
        if (const int rc = world.qp(peer, lane).post_recv(wr); rc != 0) throw world.qp(peer, lane).recv_error(rc, wr);
      }
    }
  }
}

void Transfer::poison() noexcept { std::memset(world_.arena().data(), 0, pool_bytes_); }

void Transfer::fill() {
  if (side_ == kv::Side::kPrefill) {
    kv::fill_pool(spec_, side_, side_rank_, std::span(world_.arena().data(), pool_bytes_));
  } else {
    poison();
  }
}

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
      error = verbs::completion_error(wc, fmt::format("the QP from rank {}", peer)).what();
      if (wc.status == IBV_WC_WR_FLUSH_ERR) root_cause(error);
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
      const std::uint32_t peer = wc.wr_id == kControlId ? 0 : queues_[wc.wr_id >> 32].peer;
      error = verbs::completion_error(wc, wc.wr_id == kControlId ? std::string("a notification QP")
                                                                 : fmt::format("the QP to rank {}", peer))
                  .what();
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

// A flushed receive only says its QP broke: the send CQ may hold why (say,
// retries exceeded); that error replaces `error` when there is one.
void Transfer::root_cause(std::string& error) noexcept {
  std::array<ibv_wc, kPollBatch> wcs{};
  for (int round = 0; round < 64; ++round) {
    const int n = world_.send_cq().poll(std::span(wcs));
    if (n <= 0) return;
    for (int i = 0; i < n; ++i) {
      const ibv_wc& wc = wcs[i];
      if (wc.status == IBV_WC_SUCCESS || wc.status == IBV_WC_WR_FLUSH_ERR) continue;
      const bool control = wc.wr_id == kControlId;
      error = verbs::completion_error(wc, control ? std::string("a notification QP")
                                                  : fmt::format("the QP to rank {}", queues_[wc.wr_id >> 32].peer))
                  .what();
      return;
    }
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
  const bool push = spec_.direction == kv::Direction::kPush;
  const bool decode = side_ == kv::Side::kDecode;
  const std::span<const std::byte> pool(world_.arena().data(), pool_bytes_);
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
  auto record = [&] {
    const std::uint64_t t1 = harness::now_ns();
    r.iteration_seconds.push_back(static_cast<double>(t1 - t0_) / 1e9);
    for (const auto t : request_done_) r.request_seconds.push_back(static_cast<double>((t != 0 ? t : t1) - t0_) / 1e9);
  };
  for (std::uint64_t it = 0; it < iterations; ++it) {
    const auto iter = static_cast<std::uint32_t>(it);
    start_iteration();
    bool ok = true;
    if (push && decode) {
      poison();
      ok = notify(notify_, kReady, iter, r.error) && wait_for(kDone, expected_done_ * (it + 1), false, passive, r,
                                                      "waiting for the prefill ranks' writes");
      if (ok) r.wrong_pages += kv::count_wrong_pages(spec_, side_, side_rank_, pool);
    } else if (push) {
      ok = wait_for(kReady, expected_ready_ * (it + 1), false, passive, r, "waiting for the decode ranks' ready");
      t0_ = harness::now_ns();
      ok = ok && wait_for(kDone, 0, true, waiter, r, "writing the KV cache");
      if (ok && initiator()) record();
    } else if (decode) {
      poison();
      t0_ = harness::now_ns();
      ok = wait_for(kFree, 0, true, waiter, r, "reading the KV cache");
      if (ok) {
        record();
        r.wrong_pages += kv::count_wrong_pages(spec_, side_, side_rank_, pool);
        ok = notify(notify_, kFree, iter, r.error);
      }
    } else {
      ok = wait_for(kFree, expected_free_ * (it + 1), false, passive, r, "waiting for the decode ranks' reads");
    }
    if (!ok) {
      r.ok = false;
      return r;
    }
  }
  busy_queues_ = 0;
  if (!wait_for(kReady, 0, true, waiter, r, "finishing the notifications")) r.ok = false;
  return r;
}

}  // namespace fabench::kvbench
