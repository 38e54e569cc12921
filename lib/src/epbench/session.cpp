#include "fabench/epbench/session.hpp"

#include <fmt/format.h>

#include "fabench/ep/error.hpp"

namespace fabench::epbench {

std::string EpBench::name() const {
  const std::string skew_part = !routing_file.empty()              ? "replay"
                                : skew.kind == ep::SkewKind::kNone ? "uniform"
                                                                   : ep::skew_name(skew);
  return fmt::format("ep/{}/{}/{}/t{}/{}{}", config.shape.name, ep::mode_name(config.mode), ep::dtype_name(config.dtype),
                     config.tokens, skew_part, reference ? "/ref-write" : "");
}

ep::Router EpBench::router() const {
  if (!routing_file.empty()) return {config.shape, config.ranks, ep::load_replay(routing_file, config.shape)};
  return {config.shape, config.ranks, skew, seed};
}

Session::Session(ctrl::Bootstrap& boot, const harness::Context& ctx, std::vector<EpBench> benches,
                 const SessionOptions& options)
    : boot_(boot), benches_(std::move(benches)), options_(options) {
  if (benches_.empty()) ep::fail("no benchmarks");
  world::WorldOptions wo;
  wo.qp_timeout = options.qp_timeout;
  wo.send_depth = 16;  // per QP and call: a count, a payload, a reply
  wo.recv_depth = 16;  // the same, from two calls at most
  for (auto& b : benches_) {
    b.config.ranks = boot.size();
    plans_.push_back(ep::make_plan(b.config, b.router()));
    wo.arena_bytes = std::max(wo.arena_bytes, arena_bytes(plans_.back()));
  }
  world_ = std::make_unique<world::World>(boot, ctx, world::all_peers(boot.rank(), boot.size()), wo);
  post_receives();
  boot.barrier();  // every receive is posted before anyone writes
}

void Session::post_receives() {
  for (const std::uint32_t peer : world_->peers()) {
    ibv_recv_wr wr{};
    wr.wr_id = peer;
    for (std::uint32_t i = 0; i < world_->options().recv_depth; ++i) {
      if (const int rc = world_->qp(peer).post_recv(wr); rc != 0) throw world_->qp(peer).recv_error(rc, wr);
    }
  }
}

void Session::prepare(std::size_t bench, const world::Params& /*params*/) {
  engine_.prepare(bench, [&] {
    const EpBench& b = benches_.at(bench);
    const ep::Router router = b.router();
    ep::Exchange ex(b.config, router.placement(), boot_.rank(), router.route(boot_.rank(), b.config.tokens));
    return std::make_unique<Engine>(*world_, plans_[bench], std::move(ex), b.reference);
  });
}

world::RankReport Session::run(std::uint64_t iterations, const world::Watch& watch) {
  RunResult r = engine_->run(iterations, watch);
  world::RankReport out;
  out.ok = r.ok;
  out.error = r.error;
  if (r.control_event && r.channel_closed) out.closed_channel = static_cast<int>(r.channel_index);
  out.record.set_list("dispatch_s", std::move(r.dispatch_s))
      .set_list("combine_s", std::move(r.combine_s))
      .set_u64("bad_copies", r.bad_copies)
      .set_u64("bad_tokens", r.bad_tokens);
  if (!r.ok) engine_.drop();  // a call may have stopped half-way
  return out;
}

}  // namespace fabench::epbench
