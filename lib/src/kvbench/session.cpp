#include "fabench/kvbench/session.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "fabench/base/error.hpp"
#include "fabench/harness/cli.hpp"

namespace fabench::kvbench {

std::string KvBench::name() const {
  const auto dir = kv::direction_name(spec.direction);
  if (kind == BenchKind::kSweep) {
    return fmt::format("wr/{}/{}B/sge{}/list{}/sig{}", dir, wr_bytes, sges, transfer.post_list, transfer.signal_every);
  }
  std::string n = fmt::format("kv/{}/{}/{}/isl{}/tp{}-{}", spec.model.name, kv::layout_name(spec.layout), dir, spec.isl,
                              spec.prefill_tp, spec.decode_tp);
  if (spec.layout != kv::Layout::kContiguous) n += fmt::format("/frag{}", spec.fragmentation);
  if (!spec.merge && spec.layout != kv::Layout::kContiguous) n += "+unmerged";
  if (spec.max_sge > 1) n += fmt::format("+sge{}", spec.max_sge);
  if (spec.batch > 1) n += fmt::format("+b{}", spec.batch);
  return n;
}

kv::PairPlan resplit(const kv::PairPlan& whole, std::uint64_t wr_bytes, std::uint32_t sges) {
  if (wr_bytes == 0 || sges == 0) throw UserError("resplit: zero WR size or SGE count");
  kv::PairPlan out = whole;
  out.wrs.clear();
  out.segments.clear();
  out.request_first_wr.assign(whole.request_first_wr.size(), 0);
  for (std::size_t r = 0; r + 1 < whole.request_first_wr.size(); ++r) {
    out.request_first_wr[r] = static_cast<std::uint32_t>(out.wrs.size());
    for (std::uint32_t w = whole.request_first_wr[r]; w < whole.request_first_wr[r + 1]; ++w) {
      const kv::Wr& src = whole.wrs[w];
      if (src.segment_count != 1) throw UserError("resplit: the plan is not contiguous");
      const kv::Segment seg = whole.segments[src.first_segment];
      for (std::uint64_t at = 0; at < src.length; at += wr_bytes) {
        const std::uint64_t len = std::min(wr_bytes, src.length - at);
        kv::Wr wr{src.remote_offset + at, len, static_cast<std::uint32_t>(out.segments.size()), 0};
        const std::uint64_t piece = std::max<std::uint64_t>(1, len / sges);
        for (std::uint64_t s = 0; s < len; s += piece) {
          const bool last = wr.segment_count + 1 == sges;
          const std::uint64_t n = last ? len - s : std::min(piece, len - s);
          out.segments.push_back({seg.offset + at + s, n});
          ++wr.segment_count;
          if (last) break;
        }
        out.wrs.push_back(wr);
      }
    }
  }
  out.request_first_wr.back() = static_cast<std::uint32_t>(out.wrs.size());
  return out;
}

std::vector<kv::PairPlan> plans_for(const KvBench& b) {
  if (b.kind == BenchKind::kTransfer) return kv::make_plans(b.spec);
  auto plans = kv::make_plans(b.spec);  // contiguous: one region per request
  for (auto& p : plans) p = resplit(p, b.wr_bytes, b.sges);
  return plans;
}

namespace {

std::vector<std::uint32_t> other_side(std::uint32_t rank, std::uint32_t prefill_tp, std::uint32_t size) {
  std::vector<std::uint32_t> out;
  const bool prefill = rank < prefill_tp;
  for (std::uint32_t r = prefill ? prefill_tp : 0; r < (prefill ? size : prefill_tp); ++r) out.push_back(r);
  return out;
}

}  // namespace

Session::Session(ctrl::Bootstrap& boot, const harness::Context& ctx, std::vector<KvBench> benches,
                 const SessionOptions& options)
    : boot_(boot), ctx_(ctx), benches_(std::move(benches)), options_(options) {
  if (benches_.empty()) throw UserError("no benchmarks");
  const auto& first = benches_.front().spec;
  const std::uint32_t n = boot.size();
  if (n != first.prefill_tp + first.decode_tp) {
    throw harness::UsageError(
        world::rank_count_mismatch(fmt::format("prefill TP {} and decode TP {}", first.prefill_tp, first.decode_tp),
                                   first.prefill_tp + first.decode_tp, n));
  }
  world::WorldOptions wo;
  wo.qps_per_peer = options.qps;
  wo.qp_timeout = options.qp_timeout;
  wo.recv_depth = 16;
  wo.recv_events = true;  // a rank waiting for the other side's notification blocks
  const auto max_wr = static_cast<std::uint32_t>(ctx.device().raw_attr().max_qp_wr);
  wo.send_depth = std::min(options.send_depth, max_wr);
  const bool prefill = boot.rank() < first.prefill_tp;
  const std::uint32_t side_rank = prefill ? boot.rank() : boot.rank() - first.prefill_tp;
  std::uint32_t sges = 1;
  for (const auto& b : benches_) {
    kv::validate(b.spec);
    const auto side = prefill ? kv::Side::kPrefill : kv::Side::kDecode;
    wo.arena_bytes = std::max(wo.arena_bytes, kv::pool_bytes(b.spec, side, side_rank));
    sges = std::max({sges, b.spec.max_sge, b.kind == BenchKind::kSweep ? b.sges : 1U});
  }
  const auto dev_sge = static_cast<std::uint32_t>(ctx.device().raw_attr().max_sge);
  if (sges > dev_sge) {
    throw harness::UsageError(fmt::format("{} SGEs per WR asked; {} allows {}", sges, ctx.device().name(), dev_sge));
  }
  wo.max_send_sge = sges;
  const auto peers = other_side(boot.rank(), first.prefill_tp, n);
  world_ = std::make_unique<world::World>(boot, ctx, peers, wo);
  Transfer::post_receives(*world_);
  boot.barrier();  // every receive is posted before anyone writes
}

void Session::prepare(std::size_t bench, const world::Params& /*params*/) {
  transfer_.prepare(bench, [&] {
    const KvBench& b = benches_.at(bench);
    const auto plans = plans_for(b);
    auto t = std::make_unique<Transfer>(*world_, b.spec, plans, b.transfer);
    t->fill();
    return t;
  });
}

world::RankReport Session::run(std::uint64_t iterations, const world::Watch& watch) {
  TransferResult r = transfer_->run(iterations, watch);
  if (!r.ok) transfer_.drop();  // lanes may hold half a transfer
  return r.to_report();
}

}  // namespace fabench::kvbench
