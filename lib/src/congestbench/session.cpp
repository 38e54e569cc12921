#include "fabench/congestbench/session.hpp"

#include <fmt/format.h>

#include "fabench/base/error.hpp"
#include "fabench/harness/counters.hpp"

namespace fabench::congestbench {

std::string_view test_name(VictimTest t) {
  switch (t) {
    case VictimTest::kLatency: return "latency";
    case VictimTest::kBandwidth: return "bandwidth";
    case VictimTest::kAllReduce: return "allreduce";
  }
  return "?";
}

std::string CongestBench::name() const {
  const std::string ratio = senders > 0 ? fmt::format("-{}:1", senders) : std::string();
  return fmt::format("congest/{}/{}{}", test_name(test), congest::pattern_name(pattern), ratio);
}

Session::Session(ctrl::Bootstrap& boot, const harness::Context& ctx, std::vector<CongestBench> benches,
                 SessionOptions options)
    : boot_(boot), benches_(std::move(benches)), options_(std::move(options)) {
  if (benches_.empty()) throw UserError("no benchmarks");
  world::WorldOptions wo;
  wo.qp_timeout = options_.qp_timeout;
  wo.send_depth = 2 * std::max(options_.flow_window, kBandwidthWindow);
  wo.recv_depth = 64;  // a victim's two iterations, an incast target's senders' windows
  wo.arena_bytes = Layout::arena_bytes(options_.congestor_bytes);
  world_ = std::make_unique<world::World>(boot, ctx, world::all_peers(boot.rank(), boot.size()), wo);
  post_receives();
  boot.barrier();  // every receive is posted before anyone writes
}

// Every receive has a buffer of --congestor-size: a write with immediate consumes one as well.
void Session::post_receives() {
  for (const std::uint32_t peer : world_->peers()) {
    ibv_sge sge = world_->arena().sge(Layout::kCongest + options_.congestor_bytes,
                                      static_cast<std::uint32_t>(options_.congestor_bytes));
    ibv_recv_wr wr{};
    wr.wr_id = peer;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    for (std::uint32_t i = 0; i < world_->options().recv_depth; ++i) {
      if (const int rc = world_->qp(peer).post_recv(wr); rc != 0) throw world_->qp(peer).recv_error(rc, wr);
    }
  }
}

namespace {

std::string param(const world::Params& params, std::string_view key) {
  for (const auto& [k, v] : params) {
    if (k == key) return v;
  }
  throw RunError(fmt::format("fabench-congest: the phase has no '{}'", key));
}

// The counters that tell loss and congestion (harness::counter_kind), as record fields "ctr/NAME".
void add_counter_deltas(ctrl::Record& rec, const harness::Counters& before, const harness::Counters& after) {
  for (const auto& [name, delta] : harness::counter_deltas(before, after)) {
    const auto kind = harness::counter_kind(name);
    if (kind == harness::CounterKind::kError || kind == harness::CounterKind::kCongestion) {
      rec.set_f64("ctr/" + name, static_cast<double>(delta));
    }
  }
}

}  // namespace

void Session::prepare(std::size_t bench, const world::Params& params) {
  bench_ = bench;
  loaded_ = param(params, "phase") == "loaded";
  round_ = static_cast<std::uint32_t>(std::stoul(param(params, "round")));
  seq_ = std::stoull(param(params, "seq"));
  window_ = std::chrono::milliseconds(std::stoll(param(params, "window_ms")));
  if (benches_.at(bench).test == VictimTest::kAllReduce && options_.roles.is_victim(boot_.rank()) && !allreduce_) {
    allreduce_ = make_allreduce(*world_, options_.roles);
  }
}

world::RankReport Session::run(std::uint64_t iterations, const world::Watch& watch) {
  const CongestBench& b = benches_.at(bench_);
  const std::uint32_t me = boot_.rank();
  const bool victim = options_.roles.is_victim(me);
  const harness::Counters before = harness::read_port_counters(options_.device, options_.port);
  PhaseSpec spec;
  spec.seq = seq_;
  spec.loaded = loaded_;
  spec.round = round_;
  spec.ramp = std::chrono::milliseconds(loaded_ ? options_.ramp_ms : 0);
  spec.window = window_;
  spec.flag_offset = Layout::flag(options_.congestor_bytes);
  PhaseResult r;
  if (victim) {
    r = run_victim(*world_, b.test, options_.roles, options_.seed, iterations, spec, watch, allreduce_.get());
  } else if (loaded_) {
    const auto flows = congest::congestor_flows(b.pattern, options_.roles, options_.target, b.senders);
    r = run_congestor(*world_, flows, options_.congestor_bytes, options_.flow_window, spec, watch);
  }
  world::RankReport out;
  out.ok = r.ok;
  out.error = r.error;
  if (r.control_event && r.channel_closed) out.closed_channel = static_cast<int>(r.channel_index);
  out.record.set_u64("victim", victim ? 1 : 0)
      .set_f64("seconds", r.seconds)
      .set_list("samples", std::move(r.samples))
      .set_u64("ops", r.ops)
      .set_u64("bytes", r.bytes)
      .set_u64("wrong", r.wrong);
  add_counter_deltas(out.record, before, harness::read_port_counters(options_.device, options_.port));
  return out;
}

}  // namespace fabench::congestbench
