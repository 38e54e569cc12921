#include "fabench/collbench/app.hpp"

#include <optional>
#include <string>

#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "fabench/coll/cost.hpp"
#include "fabench/coll/reduce.hpp"
#include "fabench/collbench/roles.hpp"
#include "fabench/harness/report.hpp"
#include "fabench/world/launch.hpp"

namespace fabench::collbench {

namespace {

// alpha from --alpha-us (else the transport's default), beta from the port's rate (RDMA) or the
// calibrated copy rate (shm: a write is a copy).
coll::CostParams cost_params(const Cli& c, bool shm, double rate_gbps, const coll::HostRates& rates) {
  coll::CostParams p;
  p.alpha_s = (c.alpha_us >= 0 ? c.alpha_us : (shm ? 1.0 : 10.0)) * 1e-6;
  // Over shared memory beta is the copy rate at each schedule's footprint (SessionOptions::cost_for).
  p.beta_s_per_byte = shm ? rates.copy_s_per_byte(coll::HostRates::kSizes[1])
                          : (rate_gbps > 0 ? 8.0 / (rate_gbps * 1e9) : 1e-9);
  return p;
}

void add_cost_context(const coll::CostParams& p, const coll::HostRates& r, bool shm) {
  std::string rates;
  for (std::size_t k = 0; k < std::size(coll::HostRates::kSizes); ++k) {
    rates += fmt::format("{}{} KiB: f32 {:.3g}, bf16 {:.3g}, f16 {:.3g}, copies {:.3g}", k == 0 ? "" : "; ",
                         coll::HostRates::kSizes[k] >> 10, r.reduce_bytes_per_s[k][0] / 1e9,
                         r.reduce_bytes_per_s[k][1] / 1e9, r.reduce_bytes_per_s[k][2] / 1e9,
                         r.copy_bytes_per_s[k] / 1e9);
  }
  benchmark::AddCustomContext(
      "cost_model",
      fmt::format("alpha {:.3g} us; beta {}; gamma and copies calibrated (GB/s, on {}) at {}", p.alpha_s * 1e6,
                  shm ? std::string("the copy rate at each schedule's footprint")
                      : fmt::format("{:.3g} GB/s", p.beta_s_per_byte > 0 ? 1e-9 / p.beta_s_per_byte : 0),
                  coll::reduce_path_name(coll::active_reduce_path()), rates));
}

}  // namespace

world::AppJob::Text CollJob::text() const {
  return {"fabench-coll",
          "fabench-coll: collectives across N ranks over RDMA writes, reported through Google Benchmark",
          "Launch like nccl-tests: mpirun -np N fabench-coll ..., srun -n N fabench-coll ..., or\n"
          "fabench-launch -n N fabench-coll ... (rank and size come from the launcher's environment).\n"
          "-d takes a list (rxe0,rxe1): rank r uses entry r mod its length."};
}

std::optional<int> CollJob::before_launch(CLI::App& /*app*/) {
  specs_ = build_specs(c_);
  transport_ = transport_of(c_);
  return std::nullopt;
}

std::vector<std::string> CollJob::names() const {
  return world::names_of(specs_);
}

std::unique_ptr<world::Job> CollJob::set_up(const world::Rank& rank) {
  auto so = rank.session_options<SessionOptions>();
  so.transport = transport_;
  so.reduce_threads = c_.reduce_threads;
  so.pipeline_chunks = c_.pipeline;
  auto session = std::make_unique<Session>(rank.boot, rank.ctx, specs_, so);
  session_ = session.get();
  world::log_world_up(rank, "", rank.where("shared memory"),
                      fmt::format("{} peers, {} MiB arena", session_->peer_count(), session_->arena_bytes() >> 20),
                      fmt::format("{} benchmark(s) to run", specs_.size()));
  return session;
}

// Rank 0 alone, once the world is up (the others wait for its first command): a bounded
// fraction of a second, so that a short --timeout holds on any host.
void CollJob::begin(const world::Rank& rank) {
  const bool shm = transport_ == TransportKind::kShm;
  const coll::HostRates rates = coll::calibrate_host();
  const coll::CostParams cost = cost_params(c_, shm, rank.ctx ? rank.ctx->port().rate_gbps : 0, rates);
  session_->set_cost_model(cost, rates);
  if (rank.ctx) {
    harness::add_fabric_context(*rank.ctx, "coll");
  } else {
    harness::add_host_context("coll");
  }
  benchmark::AddCustomContext("transport", shm ? "shm" : "rdma");
  world::add_world_context(rank.boot, rank.spin_before_yield, rank.qp_timeout);
  // Which reduction kernels ran (coll/reduce.hpp): a bf16 all-reduce's busbw depends on it.
  benchmark::AddCustomContext("reduce_path", std::string(coll::reduce_path_name(coll::active_reduce_path())));
  if (!coll::reduce_path_note().empty()) spdlog::warn("{}", coll::reduce_path_note());
  benchmark::AddCustomContext("reduce_threads", std::to_string(c_.reduce_threads));
  benchmark::AddCustomContext(
      "compute", c_.compute == "none" ? "none (reductions and copies skipped; output not checked)" : "full");
  add_cost_context(cost, rates, shm);
  benchmark::AddCustomContext("bandwidth_unit",
                              "GBps = 1e9 bytes/s; busbw = algbw x 2(n-1)/n (allreduce), (n-1)/n (others)");
}

int coll_main(int argc, char** argv) {
  CollJob job;
  return world::job_main(argc, argv, job);
}

}  // namespace fabench::collbench
