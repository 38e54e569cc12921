#include "fabench/collbench/session.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "fabench/base/error.hpp"

namespace fabench::collbench {

namespace {

// Peers a rank needs for an algorithm: neighbours, partners, or everyone.
std::vector<std::uint32_t> peers_for(coll::Algorithm a, std::uint32_t rank, std::uint32_t size) {
  switch (a) {
    case coll::Algorithm::kRing: return world::ring_peers(rank, size);
    case coll::Algorithm::kRecursiveHalvingDoubling:
    case coll::Algorithm::kRecursiveDoubling: return world::halving_doubling_peers(rank, size);
    default: return world::all_peers(rank, size);
  }
}

// Receive WRs one QP needs: the most writes any one peer sends us in a call,
// twice (a peer may be one call ahead), plus slack.
std::uint32_t arrivals_per_peer(const coll::Schedule& s, std::uint32_t size) {
  std::vector<std::uint32_t> per(size, 0);
  std::uint32_t most = 0;
  for (const auto src : s.expect_from) most = std::max(most, ++per[src]);
  return most;
}

}  // namespace

std::string CollSpec::name() const {
  return fmt::format("{}/{}/{}/{}{}", coll::collective_name(collective),
                     is_auto ? std::string_view("auto") : coll::algorithm_name(algorithm), coll::dtype_name(dtype),
                     bytes, compute ? "" : "/compute:none");
}

coll::Schedule schedule_for(const CollSpec& s, std::uint32_t nranks, std::uint32_t rank,
                            std::uint32_t pipeline_chunks) {
  coll::ScheduleOptions o;
  o.pipeline_chunks = s.algorithm == coll::Algorithm::kRing
                          ? (pipeline_chunks > 0 ? pipeline_chunks : auto_pipeline_chunks(s.bytes, nranks))
                          : 1;
  return coll::build_schedule(s.collective, s.algorithm, nranks, rank, s.count(), coll::dtype_size(s.dtype), o);
}

std::uint64_t SessionOptions::footprint_bytes(const coll::Schedule& sched) {
  // A rank's repeated calls touch its whole arena (input, both parities' outputs and scratch);
  // calibrate_host() measures each kernel over two buffers of the size it names.
  return ArenaLayout::of(sched).total / 2;
}

coll::CostParams SessionOptions::cost_for(coll::DType t, bool compute, const coll::Schedule& sched) const {
  coll::CostParams c = cost;
  const std::uint64_t at = footprint_bytes(sched);
  c.gamma_s_per_byte = compute ? rates.gamma_s_per_byte(t, at) : 0.0;
  if (transport == TransportKind::kShm) c.beta_s_per_byte = rates.copy_s_per_byte(at);
  return c;
}

double SessionOptions::copies_seconds(bool compute, const coll::Schedule& sched) const {
  if (!compute) return 0;
  std::uint64_t bytes = 0;
  for (const auto& op : sched.ops) {
    if (op.kind == coll::OpKind::kCopy) bytes += op.bytes;
  }
  return static_cast<double>(bytes) * rates.copy_s_per_byte(footprint_bytes(sched));
}

std::uint32_t auto_pipeline_chunks(std::uint64_t bytes, std::uint32_t nranks) {
  const std::uint64_t ring_chunk = bytes / std::max<std::uint32_t>(nranks, 1);
  return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(ring_chunk / kAutoSubChunkBytes, 1, kAutoMaxChunks));
}

std::uint64_t fnv1a(const std::byte* p, std::uint64_t n) noexcept {
  std::uint64_t h = 1469598103934665603ULL;
  for (std::uint64_t i = 0; i < n; ++i) {
    h ^= static_cast<std::uint8_t>(p[i]);
    h *= 1099511628211ULL;
  }
  return h;
}

Session::Session(ctrl::Bootstrap& boot, const harness::Context* ctx, std::vector<CollSpec> specs,
                 const SessionOptions& options)
    : boot_(boot), specs_(std::move(specs)), options_(options) {
  const std::uint32_t n = boot.size();
  const std::uint32_t r = boot.rank();
  std::vector<std::uint32_t> peers;
  world::WorldOptions wo;
  wo.send_depth = 16;
  wo.qp_timeout = options.qp_timeout;
  std::uint32_t recv = 4;
  std::uint64_t steps = 1;
  // Every algorithm any spec may run (auto may pick any all-reduce one).
  for (const auto& s : specs_) {
    const auto algos = s.is_auto ? std::vector<coll::Algorithm>(coll::algorithms_for(s.collective).begin(),
                                                                coll::algorithms_for(s.collective).end())
                                 : std::vector<coll::Algorithm>{s.algorithm};
    for (const auto a : algos) {
      CollSpec t = s;
      t.algorithm = a;
      const auto sched = schedule_for(t, n, r, options_.pipeline_chunks);
      wo.arena_bytes = std::max(wo.arena_bytes, ArenaLayout::of(sched).total);
      recv = std::max(recv, 2 * arrivals_per_peer(sched, n) + 2);
      steps = std::max<std::uint64_t>(steps, sched.num_steps());
      const auto p = peers_for(a, r, n);
      peers.insert(peers.end(), p.begin(), p.end());
    }
  }
  pool_ = std::make_unique<ReducePool>(options.reduce_threads);
  if (options.transport == TransportKind::kShm) {
    // The steps of every rank's schedules are aligned (schedule.hpp): the same count everywhere.
    shm_ = std::make_unique<world::ShmWorld>(boot, peers, wo.arena_bytes, 2 * steps);
    return;
  }
  if (ctx == nullptr) throw RunError("the RDMA transport needs a device context");
  const auto max_wr = static_cast<std::uint32_t>(ctx->device().raw_attr().max_qp_wr);
  if (recv > max_wr) {
    throw UserError(fmt::format("{} receives per QP needed, {} allows {}", recv, ctx->device().name(), max_wr));
  }
  wo.recv_depth = recv;
  world_ = std::make_unique<world::World>(boot, *ctx, peers, wo);
  RdmaTransport::post_receives(*world_);
  boot.barrier();  // every receive is posted before anyone writes
}

std::size_t Session::peer_count() const noexcept { return world_ ? world_->peers().size() : shm_->peers().size(); }

std::uint64_t Session::arena_bytes() const noexcept { return world_ ? world_->arena().length() : shm_->arena_bytes(); }

void Session::prepare(std::size_t bench, const world::Params& params) {
  for (const auto& [k, v] : params) {
    if (k != "algo") continue;
    const auto a = coll::parse_algorithm(v);
    if (!a) throw RunError(fmt::format("rank 0 asked for unknown algorithm '{}'", v));
    specs_.at(bench).algorithm = *a;
  }
  prepare(bench);
}

void Session::prepare(std::size_t index) {
  if (current_ == index && exec_) return;
  exec_.reset();
  current_.reset();
  const CollSpec& s = specs_.at(index);
  const std::uint32_t n = boot_.size();
  const std::uint32_t r = boot_.rank();
  const ExecOptions eo{s.compute, pool_.get()};
  auto sched_of = schedule_for(s, n, r, options_.pipeline_chunks);
  if (world_) {
    exec_ = std::make_unique<Executor>(*world_, std::move(sched_of), s.dtype, s.op, eo);
  } else {
    exec_ = std::make_unique<Executor>(*shm_, std::move(sched_of), s.dtype, s.op, eo);
  }
  const auto& sched = exec_->schedule();
  const coll::DataSpec data{s.dtype, s.op, n, 1};
  const std::uint32_t elem = coll::dtype_size(s.dtype);
  coll::fill_input(data, r, exec_->input(), sched.input_bytes / elem);
  expected_.assign(sched.output_bytes, std::byte{0});
  coll::expected_output(data, s.collective, r, sched.count, expected_.data());
  current_ = index;
}

RankResult Session::run_calls(std::uint64_t iterations, const Watch& watch) {
  RankResult out;
  const auto res = exec_->run(iterations, watch);
  out.ok = res.ok;
  out.error = res.error;
  out.seconds = res.seconds;
  out.ops_seconds = res.ops_seconds;
  if (res.control_event && res.channel_closed) out.closed_channel = static_cast<int>(res.channel_index);
  const auto& sched = exec_->schedule();
  out.wire_bytes = coll::wire_bytes(sched);
  if (res.ok) {
    // With compute none the output is not the collective's: nothing to check.
    if (specs_[*current_].compute) {
      const std::uint32_t elem = coll::dtype_size(specs_[*current_].dtype);
      out.wrong = coll::count_wrong(specs_[*current_].dtype, exec_->last_output(), expected_.data(),
                                    sched.output_bytes / elem);
      out.hash = fnv1a(exec_->last_output(), sched.output_bytes);
    }
  } else {
    // The buffers may hold a half-done call; the next run starts afresh.
    exec_.reset();
    current_.reset();
  }
  return out;
}

}  // namespace fabench::collbench
