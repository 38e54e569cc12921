#include "fabench/congestbench/app.hpp"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "fabench/harness/report.hpp"

namespace fabench::congestbench {

world::AppJob::Text CongestJob::text() const {
  return {"fabench-congest",
          "fabench-congest: victim latency and bandwidth alone and beside incast, broadcast and all-to-all "
          "congestors (GPCNeT's Congestion Impact Factor), with the port and counters that moved",
          "Most ranks congest (--congestors 0.8, a seeded shuffle, or --congestor-ranks), the others run the\n"
          "victim tests over a random ring: each test alone and beside each pattern, interleaved, --rounds\n"
          "times. CIF = loaded/isolated latency, isolated/loaded bandwidth (> 1: worse), for the mean and the\n"
          "99th percentile. -d takes a list (rxe0,rxe1): rank r uses entry r mod its length; victims are\n"
          "grouped by that port, and a port whose victims' p99 CIF exceeds 2 and twice the others' is named.\n"
          "Launch N ranks (N >= 3) with mpirun -np N, srun -n N or fabench-launch -n N. docs/design/congest.md"};
}

std::optional<int> CongestJob::before_launch(CLI::App& /*app*/) {
  benches_ = build_benches(c_);
  return std::nullopt;
}

void CongestJob::check_size(const ctrl::Bootstrap& boot) const {
  const congest::Roles roles = roles_of(c_, boot.size());
  const std::uint32_t target = c_.target.value_or(roles.congestors.front());
  for (const auto& b : benches_) (void)congest::congestor_flows(b.pattern, roles, target, b.senders);
}

std::vector<std::string> CongestJob::names() const {
  return world::names_of(benches_);
}

std::unique_ptr<world::Job> CongestJob::set_up(const world::Rank& rank) {
  ranks_ = rank.boot.size();
  roles_ = roles_of(c_, ranks_);
  target_ = c_.target.value_or(roles_.congestors.front());
  auto so = rank.session_options<SessionOptions>();
  so.roles = roles_;
  so.target = target_;
  so.congestor_bytes = congestor_bytes(c_);
  so.seed = c_.seed;
  so.ramp_ms = c_.ramp_ms;
  so.device = rank.ctx->device().name();
  so.port = rank.ctx->port().port_num;
  auto session = std::make_unique<Session>(rank.boot, *rank.ctx, benches_, std::move(so));
  const bool victim = roles_.is_victim(rank.boot.rank());
  world::log_world_up(rank, victim ? " (victim)" : " (congestor)", rank.where(),
                      fmt::format("{} peers", session->world().peers().size()),
                      fmt::format("{} benchmark(s)", benches_.size()));
  return session;
}

void CongestJob::begin(const world::Rank& rank) {
  harness::add_fabric_context(*rank.ctx, "congest");
  world::add_world_context(rank.boot, rank.spin_before_yield, rank.qp_timeout);
  const auto add = [](const std::string& k, const std::string& v) { benchmark::AddCustomContext(k, v); };
  add("congest_roles", congest::describe(roles_));
  add("congest_target", std::to_string(target_));
  add("congest_size", std::to_string(congestor_bytes(c_)));
  add("congest_rounds", std::to_string(c_.rounds));
  add("congest_units",
      "latency: us per ring iteration; bandwidth: GB/s (1e9 bytes/s) per victim; cif: loaded/isolated latency, "
      "isolated/loaded bandwidth, > 1 is worse; p99 is the worse 1 % (slowest latency, lowest bandwidth)");
}

int congest_main(int argc, char** argv) {
  CongestJob job;
  return world::job_main(argc, argv, job);
}

}  // namespace fabench::congestbench
