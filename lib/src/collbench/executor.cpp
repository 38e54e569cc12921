#include "fabench/collbench/executor.hpp"

#include <arpa/inet.h>

#include <array>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fabench/harness/loop.hpp"
#include "fabench/verbs/error.hpp"

namespace fabench::collbench {

namespace {

using harness::kPollBatch;

constexpr std::uint64_t kAlign = 64;
constexpr std::uint32_t kParityBit = 1U << 31;

std::uint64_t align_up(std::uint64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

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

Executor::Executor(const world::World& world, coll::Schedule schedule, coll::DType dtype, coll::ReduceOp op)
    : world_(world),
      schedule_(std::move(schedule)),
      dtype_(dtype),
      op_(op),
      elem_bytes_(coll::dtype_size(dtype)),
      layout_(ArenaLayout::of(schedule_)),
      base_(world.arena().data()) {
  if (layout_.total > world.arena().length()) {
    throw std::invalid_argument(
        fmt::format("collective needs {} bytes of arena, the world has {}", layout_.total, world.arena().length()));
  }
  if (schedule_.num_steps() >= kParityBit) throw std::invalid_argument("too many steps for the immediate");
  const auto n = schedule_.writes.size();
  wr_qp_.resize(n);
  for (unsigned p = 0; p < 2; ++p) {
    sges_[p].resize(n);
    wrs_[p].resize(n);
  }
  std::size_t w = 0;
  for (std::size_t k = 0; k < schedule_.num_steps(); ++k) {
    for (const auto& t : schedule_.step(k).writes) {
      if (!world.has_peer(t.dst_rank)) {
        throw std::invalid_argument(fmt::format("schedule writes to rank {}, which is not a peer", t.dst_rank));
      }
      if (t.bytes > 0x7fffffffULL) throw std::invalid_argument("a single write above 2 GiB");
      wr_qp_[w] = &world.qp(t.dst_rank);
      for (unsigned p = 0; p < 2; ++p) {
        sges_[p][w] = world.arena().sge(layout_.offset(t.src_buf, p) + t.src_offset,
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
        wr.wr.rdma.remote_addr = world.remote(t.dst_rank).addr + layout_.offset(t.dst_buf, p) + t.dst_offset;
        wr.wr.rdma.rkey = world.remote(t.dst_rank).rkey;
      }
      ++w;
    }
  }
  expected_.resize(schedule_.num_steps());
  for (std::size_t k = 0; k < schedule_.num_steps(); ++k) {
    expected_[k] = static_cast<std::uint32_t>(schedule_.step(k).expect_from.size());
  }
  for (auto& a : arrived_) a.assign(schedule_.num_steps(), 0);
}

const std::byte* Executor::last_output() const noexcept {
  const unsigned parity = call_seq_ == 0 ? 0U : static_cast<unsigned>((call_seq_ - 1) & 1U);
  return base_ + layout_.output[parity];
}

void Executor::post_receives(const world::World& world) {
  for (const auto peer : world.peers()) {
    ibv_recv_wr wr{};
    wr.wr_id = peer;
    wr.num_sge = 0;  // write-with-immediate places its data itself; the receive only carries the immediate
    for (std::uint32_t i = 0; i < world.options().recv_depth; ++i) {
      if (const int rc = world.qp(peer).post_recv(wr); rc != 0) throw world.qp(peer).recv_error(rc, wr);
    }
  }
}

// Takes what the CQs hold: arrivals counted by (parity, step) and their
// receives reposted, send completions retired. Returns the number of
// completions seen, or -1 with `error` set.
int Executor::drain(std::uint64_t& outstanding, ibv_wc* wcs, std::string& error) noexcept {
  const int nr = world_.recv_cq().poll(std::span(wcs, kPollBatch));
  for (int i = 0; i < nr; ++i) {
    const ibv_wc& wc = wcs[i];
    if (wc.status != IBV_WC_SUCCESS) [[unlikely]] {
      error = verbs::completion_error(wc, fmt::format("the QP from rank {}", wc.wr_id)).what();
      return -1;
    }
    const std::uint32_t imm = ntohl(wc.imm_data);
    const std::uint32_t step = imm & ~kParityBit;
    if (step < arrived_[0].size()) ++arrived_[(imm & kParityBit) != 0 ? 1 : 0][step];
    ibv_recv_wr wr{};
    wr.wr_id = wc.wr_id;
    const auto& qp = world_.qp(static_cast<std::uint32_t>(wc.wr_id));
    if (qp.post_recv(wr) != 0) [[unlikely]] {
      error = fmt::format("ibv_post_recv failed while reposting a receive for rank {}", wc.wr_id);
      return -1;
    }
  }
  const int ns = world_.send_cq().poll(std::span(wcs, kPollBatch));
  for (int i = 0; i < ns; ++i) {
    if (wcs[i].status != IBV_WC_SUCCESS) [[unlikely]] {
      const auto& t = schedule_.writes[wcs[i].wr_id];
      error = verbs::completion_error(wcs[i], fmt::format("the QP to rank {}", t.dst_rank)).what();
      return -1;
    }
    --outstanding;
  }
  if (nr < 0 || ns < 0) [[unlikely]] {
    error = "ibv_poll_cq failed";
    return -1;
  }
  return nr + ns;
}

void Executor::run_ops(std::size_t step, unsigned parity) noexcept {
  for (const auto& op : schedule_.step(step).ops) {
    std::byte* dst = base_ + layout_.offset(op.dst_buf, parity) + op.dst_offset;
    const std::byte* src = base_ + layout_.offset(op.src_buf, parity) + op.src_offset;
    if (op.kind == coll::OpKind::kReduce) {
      coll::reduce(dtype_, op_, dst, src, op.bytes / elem_bytes_);
    } else {
      std::memcpy(dst, src, op.bytes);
    }
  }
}

ExecResult Executor::run(std::uint64_t calls, const Watch& watch) {
  ExecResult r;
  std::array<ibv_wc, kPollBatch> wcs{};
  world::Waiter waiter(watch);
  const std::uint64_t t_start = harness::now_ns();
  std::uint64_t outstanding = 0;
  for (std::uint64_t c = 0; c < calls; ++c) {
    const unsigned p = static_cast<unsigned>(call_seq_ & 1U);
    std::size_t w = 0;
    for (std::size_t k = 0; k < schedule_.num_steps(); ++k) {
      const auto step = schedule_.step(k);
      for (std::size_t i = 0; i < step.writes.size(); ++i, ++w) {
        if (const int rc = wr_qp_[w]->post_send(wrs_[p][w]); rc != 0) [[unlikely]] {
          r.ok = false;
          r.error = wr_qp_[w]->send_error(rc, wrs_[p][w]).what();
          return r;
        }
        ++outstanding;
      }
      while (arrived_[p][k] < expected_[k] || outstanding > 0) {
        const int n = drain(outstanding, wcs.data(), r.error);
        if (n < 0) [[unlikely]] {
          r.ok = false;
          return r;
        }
        if (n > 0) {
          waiter.progress();
          continue;
        }
        const auto verdict = waiter.idle();
        if (verdict == world::Waiter::Verdict::kGoOn) continue;
        r.ok = false;
        if (verdict == world::Waiter::Verdict::kControl) {
          r.control_event = true;
          r.channel_index = waiter.channel_index();
          r.channel_closed = waiter.channel_closed();
          r.error = fmt::format("stopped at step {} of {} in call {}", k + 1, schedule_.num_steps(), c + 1);
        } else {
          r.error = fmt::format(
              "no progress for {} s at step {} of {} in call {}: waiting for {} of {} arrivals "
              "(from ranks {}) and {} write completions",
              watch.stall.count() / 1000, k + 1, schedule_.num_steps(), c + 1,
              expected_[k] - std::min(expected_[k], arrived_[p][k]), expected_[k], fmt::join(step.expect_from, ","),
              outstanding);
          // A write completes only when all of it has landed: on a slow link, large writes
          // sharing it can each take longer than the stall limit while every byte moves.
          std::uint64_t largest = 0;
          for (const auto& t : step.writes) largest = std::max(largest, t.bytes);
          if (largest >= (std::uint64_t{1} << 20)) {
            r.error += fmt::format(
                " ({} writes of up to {} MiB in this step: if the link needs longer than {} s "
                "for them, raise --timeout)",
                step.writes.size(), largest >> 20, watch.stall.count() / 1000);
          }
        }
        return r;
      }
      arrived_[p][k] -= expected_[k];
      run_ops(k, p);
    }
    ++call_seq_;
    r.calls_done = c + 1;
  }
  r.seconds = static_cast<double>(harness::now_ns() - t_start) / 1e9;
  return r;
}

}  // namespace fabench::collbench
