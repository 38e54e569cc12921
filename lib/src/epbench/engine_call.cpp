// Engine's calls: the dispatch and combine protocol of engine.hpp, its waits and its checks.
#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fabench/epbench/engine.hpp"
#include "fabench/harness/loop.hpp"
#include "fabench/verbs/error.hpp"
#include "fabench/world/poll.hpp"

namespace fabench::epbench {

namespace {

constexpr std::uint32_t kParityBit = 1u << 31;
constexpr std::uint32_t kValueMask = (1u << 29) - 1;

std::uint32_t immediate(unsigned p, std::uint32_t phase, std::uint32_t value) {
  return (p ? kParityBit : 0u) | (phase << 29) | (value & kValueMask);
}

constexpr std::array<const char*, 3> kPhaseNames{"counts", "dispatch payloads", "combine replies"};

}  // namespace

struct Engine::Wait {
  const world::Watch& watch;
  world::Waiter waiter;
  RunResult& r;
};

RunResult Engine::run(std::uint64_t calls, const world::Watch& watch) {
  RunResult r;
  r.dispatch_s.reserve(calls);
  r.combine_s.reserve(calls);
  if (calls_ == 0 && !warm_up(watch, r)) return r;
  const std::uint64_t last = calls_ + calls - 1;
  for (std::uint64_t i = 0; i < calls; ++i) {
    const std::uint64_t index = calls_;
    CallResult c;
    if (!call(index, watch, c, r)) return r;
    r.dispatch_s.push_back(c.dispatch_s);
    r.combine_s.push_back(c.combine_s);
    ++calls_;
    if (index + 2 == last) clear(index & 1);  // the checked call lands on cleared memory
  }
  check(last & 1, r);
  clear(0);
  clear(1);
  return r;
}

// The engine's first run starts with kWarmupCalls untimed calls, one per buffer parity (as
// fabench-coll's -w 2): the first touch of every region and QP is not timed. Each one's landing
// regions are cleared right after it (a peer is at most one call ahead, in the other parity),
// so a checked call never reads a warm-up's data.
bool Engine::warm_up(const world::Watch& watch, RunResult& r) {
  for (std::uint64_t i = 0; i < kWarmupCalls; ++i) {
    CallResult ignored;
    if (!call(calls_, watch, ignored, r)) return false;
    clear(calls_ & 1);
    ++calls_;
  }
  return true;
}

bool Engine::call(std::uint64_t index, const world::Watch& watch, CallResult& out, RunResult& r) {
  const unsigned p = index & 1;
  Wait wd{watch, world::Waiter(watch), r};
  const std::uint64_t t0 = harness::now_ns();
  if (!(reference_ ? reference_dispatch(p, wd) : dispatch(p, wd))) return false;
  const std::uint64_t t1 = harness::now_ns();
  if (reference_) {  // the floor moves the fabric bytes only: the own copies, untimed
    const Layout& me = layouts_[self_];
    std::memcpy(base_ + me.recv[p][self_], base_ + me.send[self_], dispatch_bytes(self_, self_));
  }
  if (!replies_made_) {  // the experts' outputs: from the first call's data, the same after
    make_replies(p, nullptr);
    replies_made_ = true;
  }
  Wait wc{watch, world::Waiter(watch), r};
  const std::uint64_t t2 = harness::now_ns();
  if (!combine(p, wc)) return false;
  const std::uint64_t t3 = harness::now_ns();
  out.dispatch_s = static_cast<double>(t1 - t0) * 1e-9;
  out.combine_s = static_cast<double>(t3 - t2) * 1e-9;
  return true;
}

bool Engine::dispatch(unsigned p, Wait& w) {
  const Layout& me = layouts_[self_];
  const bool normal = plan_.config.mode == ep::Mode::kNormal;
  if (normal) {
    for (const std::uint32_t d : others_) {
      if (!post(d, 0, 0, 0, immediate(p, kCount, plan_.ranks[self_].copies_to[d]), w.r.error)) return false;
    }
    if (!wait_for(p, kCount, others_, w)) return false;
    for (const std::uint32_t s : others_) {
      const std::uint32_t got = mailbox_[p][kCount][s] - 1;
      mailbox_[p][kCount][s] = 0;
      if (got != plan_.ranks[s].copies_to[self_]) {
        w.r.ok = false;
        w.r.error = fmt::format(
            "rank {} announced {} copies for this rank, the plan says {} (do the ranks run the same routing?)", s, got,
            plan_.ranks[s].copies_to[self_]);
        return false;
      }
    }
  }
  for (const std::uint32_t d : normal ? send_to_ : others_) {
    if (!post(d, me.send[d], dispatch_bytes(self_, d), layouts_[d].recv[p][self_],
              immediate(p, kPayload, plan_.ranks[self_].copies_to[d]), w.r.error)) {
      return false;
    }
  }
  std::memcpy(base_ + me.recv[p][self_], base_ + me.send[self_], dispatch_bytes(self_, self_));
  if (!wait_for(p, kPayload, normal ? recv_from_ : others_, w)) return false;
  for (auto& m : mailbox_[p][kPayload]) m = 0;
  return true;
}

// engine.hpp's reference: a plain write of the same bytes to the same place and a zero-byte
// write-with-immediate behind it (RC keeps the order), per destination; no count round.
bool Engine::reference_dispatch(unsigned p, Wait& w) {
  const Layout& me = layouts_[self_];
  const bool normal = plan_.config.mode == ep::Mode::kNormal;
  for (const std::uint32_t d : normal ? send_to_ : others_) {
    const std::uint64_t bytes = dispatch_bytes(self_, d);
    if (bytes > 0 && !post(d, me.send[d], bytes, layouts_[d].recv[p][self_], 0, w.r.error, false)) return false;
    if (!post(d, 0, 0, 0, immediate(p, kPayload, plan_.ranks[self_].copies_to[d]), w.r.error)) return false;
  }
  if (!wait_for(p, kPayload, normal ? recv_from_ : others_, w)) return false;
  for (auto& m : mailbox_[p][kPayload]) m = 0;
  return true;
}

bool Engine::combine(unsigned p, Wait& w) {
  const Layout& me = layouts_[self_];
  for (const std::uint32_t s : recv_from_) {
    if (!post(s, me.reply[s], reply_bytes(s, self_), layouts_[s].back[p][self_], immediate(p, kCombine, 0),
              w.r.error)) {
      return false;
    }
  }
  std::memcpy(base_ + me.back[p][self_], base_ + me.reply[self_], reply_bytes(self_, self_));
  if (!wait_for(p, kCombine, send_to_, w)) return false;
  for (auto& m : mailbox_[p][kCombine]) m = 0;
  return true;
}

bool Engine::post(std::uint32_t peer, std::uint64_t local_off, std::uint64_t bytes, std::uint64_t remote_off,
                  std::uint32_t imm, std::string& error, bool with_imm) {
  ibv_sge sge = world_.arena().sge(local_off, static_cast<std::uint32_t>(bytes));
  ibv_send_wr wr{};
  wr.wr_id = peer;
  wr.opcode = with_imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
  wr.sg_list = bytes > 0 ? &sge : nullptr;
  wr.num_sge = bytes > 0 ? 1 : 0;
  wr.imm_data = htonl(imm);
  // A plain write is unsignaled: the write-with-immediate posted behind it completes it.
  wr.send_flags = with_imm ? IBV_SEND_SIGNALED : 0;
  wr.wr.rdma.remote_addr = world_.remote(peer).addr + remote_off;
  wr.wr.rdma.rkey = world_.remote(peer).rkey;
  if (const int rc = world_.qp(peer).post_send(wr); rc != 0) [[unlikely]] {
    error = world_.qp(peer).send_error(rc, wr).what();
    return false;
  }
  if (with_imm) ++outstanding_;
  return true;
}

int Engine::poll(std::string& error) {
  std::array<ibv_wc, 32> wcs;
  return world::poll_world(
      world_, std::span(wcs), outstanding_, error,
      [&](std::uint32_t peer, std::uint32_t imm) {
        const std::uint32_t phase = (imm >> 29) & 3u;
        if (phase < 3) mailbox_[(imm & kParityBit) ? 1 : 0][phase][peer] = (imm & kValueMask) + 1;
      },
      [](const ibv_wc& wc) { return wc.wr_id; });
}

bool Engine::wait_for(unsigned p, Phase phase, const std::vector<std::uint32_t>& from, Wait& w) {
  const auto& box = mailbox_[p][phase];
  const auto landed = [&] {
    return std::all_of(from.begin(), from.end(), [&](std::uint32_t s) { return box[s] != 0; });
  };
  for (;;) {
    if (outstanding_ == 0 && landed()) return true;
    const int n = poll(w.r.error);
    if (n < 0) [[unlikely]] {
      w.r.ok = false;
      return false;
    }
    if (n > 0) {
      w.waiter.progress();
      continue;
    }
    const auto verdict = w.waiter.idle();
    if (verdict == world::Waiter::Verdict::kGoOn) continue;
    w.r.ok = false;
    if (verdict == world::Waiter::Verdict::kControl) {
      w.r.control_event = true;
      w.r.channel_index = w.waiter.channel_index();
      w.r.channel_closed = w.waiter.channel_closed();
      w.r.error = fmt::format("stopped while waiting for {}", kPhaseNames[phase]);
      return false;
    }
    std::vector<std::uint32_t> missing;
    for (const std::uint32_t s : from) {
      if (box[s] == 0) missing.push_back(s);
    }
    std::sort(missing.begin(), missing.end());
    w.r.error = fmt::format("no progress for {} s waiting for {} from ranks {} ({} writes not completed)",
                            w.watch.stall.count() / 1000, kPhaseNames[phase], fmt::join(missing, ","), outstanding_);
    return false;
  }
}

void Engine::make_replies(unsigned p, RunResult* r) {
  const Layout& me = layouts_[self_];
  for (std::uint32_t s = 0; s < n_; ++s) {
    const std::span<const std::byte> region(base_ + me.recv[p][s], dispatch_bytes(s, self_));
    const std::span<std::byte> reply(base_ + me.reply[s], reply_bytes(s, self_));
    std::uint64_t replied = 0;
    const std::uint64_t bad = ex_.receive_dispatch(s, region, plan_.ranks[s].copies_to[self_], reply, &replied);
    if (r != nullptr) r->bad_copies += bad + (replied == reply.size() ? 0 : 1);
  }
}

void Engine::check(unsigned p, RunResult& r) {
  make_replies(p, &r);
  const Layout& me = layouts_[self_];
  r.bad_tokens = ex_.check_combine(
      [&](std::uint32_t d) { return std::span<const std::byte>(base_ + me.back[p][d], reply_bytes(self_, d)); });
}

void Engine::clear(unsigned p) {
  const Layout& me = layouts_[self_];
  for (std::uint32_t q = 0; q < n_; ++q) {
    std::memset(base_ + me.recv[p][q], 0, dispatch_bytes(q, self_));
    std::memset(base_ + me.back[p][q], 0, reply_bytes(self_, q));
  }
}

}  // namespace fabench::epbench
