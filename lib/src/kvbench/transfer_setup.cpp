// Transfer's setup (transfer.hpp): the result's record, the queues of
// prebuilt WRs and SGEs each lane posts, the receives for notifications and
// the pool's contents. The loop that runs them is transfer.cpp.
#include "fabench/base/error.hpp"
#include "fabench/kvbench/transfer.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "fabench/kv/pattern.hpp"
#include "transfer_ids.hpp"

namespace fabench::kvbench {

using transfer_ids::kDonePos;

namespace {

std::uint32_t world_rank(kv::Side side, std::uint32_t side_rank, const kv::KvSpec& s) {
  return side == kv::Side::kPrefill ? side_rank : s.prefill_tp + side_rank;
}

}  // namespace

TransferResult TransferResult::from_record(const ctrl::Record& r) {
  TransferResult out;
  ctrl::read_fields(r, out);
  // n iterations of `batch` requests each: request_seconds is n x batch.
  const std::size_t n = out.iteration_seconds.size();
  if (n == 0 ? !out.request_seconds.empty() : out.request_seconds.size() % n != 0) {
    throw ctrl::RecordError(fmt::format("a result of {} request times for {} iterations (expected a multiple)",
                                        out.request_seconds.size(), n));
  }
  return out;
}

TransferResult TransferResult::from_report(const world::RankReport& r) { return world::result_of<TransferResult>(r); }

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
  const std::uint32_t sig = std::max<std::uint32_t>(1,
                                                    std::min(options_.signal_every, world_.options().send_depth / 2));
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

}  // namespace fabench::kvbench
