#include "fabench/epbench/app.hpp"

#include <iostream>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "fabench/epbench/roles.hpp"
#include "fabench/harness/report.hpp"
#include "fabench/kv/plan.hpp"

namespace fabench::epbench {

namespace {

void add_context(const EpBench& b, std::uint32_t ranks) {
  const auto add = [](const std::string& k, const std::string& v) { benchmark::AddCustomContext(k, v); };
  const ep::MoeShape& m = b.config.shape;
  add("ep_model", m.name);
  add("ep_hidden", std::to_string(m.hidden));
  add("ep_experts", fmt::format("{} ({} per rank at most)", m.experts, ep::Placement(m.experts, ranks).max_count()));
  add("ep_top_k", std::to_string(m.top_k));
  add("ep_groups", m.group_limited() ? fmt::format("{} of {}", m.topk_group, m.n_group) : "none");
  add("ep_routing", b.routing_file.empty() ? fmt::format("seed {}, skew {}", b.seed, ep::skew_name(b.skew))
                                           : "replay " + b.routing_file);
  add("ep_units",
      "dispatch_us/combine_us: p50 over calls of the slowest rank; GBps = 1e9 bytes/s of fabric bytes per rank; "
      "recv_tokens: token copies a rank's experts get");
}

}  // namespace

world::AppJob::Text EpJob::text() const {
  return {"fabench-ep", "fabench-ep: MoE dispatch and combine (expert parallelism) over RDMA, shaped by real models",
          "Experts are placed E/N per rank in contiguous blocks; every rank draws its tokens' top-k\n"
          "experts from (--seed, rank), so every rank knows every count. Launch N ranks with mpirun -np N,\n"
          "srun -n N or fabench-launch -n N. -d takes a list (rxe0,rxe1): rank r uses entry r mod its length.\n"
          "--plan needs no RDMA: bytes, copies, WRs and predicted times per EP size (--ep).\n"
          "Presets: " +
              ep_preset_list()};
}

std::optional<int> EpJob::before_launch(CLI::App& /*app*/) {
  if (c_.plan) {
    std::cout << render_plan(c_);
    return 0;
  }
  benches_ = build_benches(c_);
  return std::nullopt;
}

std::vector<std::string> EpJob::names() const {
  return world::names_of(benches_);
}

std::unique_ptr<world::Job> EpJob::set_up(const world::Rank& rank) {
  auto so = rank.session_options<SessionOptions>();
  auto session = std::make_unique<Session>(rank.boot, *rank.ctx, benches_, so);
  session_ = session.get();
  world::log_world_up(
      rank, "", rank.where(),
      fmt::format("{} peers, {} MiB arena", session_->world().peers().size(), session_->world().arena().length() >> 20),
      fmt::format("{} benchmark(s)", benches_.size()));
  return session;
}

void EpJob::begin(const world::Rank& rank) {
  harness::add_fabric_context(*rank.ctx, "ep");
  world::add_world_context(rank.boot, rank.spin_before_yield, rank.qp_timeout);
  add_context(session_->benches().front(), rank.boot.size());
  link_bytes_per_s_ = c_.link.empty() ? rank.ctx->port().rate_gbps * 1e9 / 8 : kv::parse_link_rate(c_.link);
  wr_cost_s_ = c_.wr_cost_ns * 1e-9;
  round_s_ = c_.round_us * 1e-6;
}

int ep_main(int argc, char** argv) {
  EpJob job;
  return world::job_main(argc, argv, job);
}

}  // namespace fabench::epbench
