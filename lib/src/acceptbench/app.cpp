#include "fabench/acceptbench/app.hpp"

#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "fabench/accept/budget.hpp"
#include "fabench/acceptbench/cli.hpp"
#include "fabench/acceptbench/session.hpp"
#include "fabench/harness/cli.hpp"
#include "fabench/world/job_app.hpp"

namespace fabench::acceptbench {

namespace {

using harness::UsageError;

RunSettings settings_of(const Cli& c) {
  RunSettings s;
  s.link.lanes = c.qps;
  s.link.depth = c.depth;
  s.link.bw_bytes = bw_bytes(c);
  s.plan.seconds = c.seconds;
  s.plan.lat_iters = c.lat_iters;
  s.link.qp_timeout = static_cast<std::uint8_t>(c.ranks.qp_timeout);
  s.plan.stall = c.dev.timeout();
  s.pair_s = pair_seconds(c);
  s.pair_timeout_s = pair_timeout_seconds(c);
  s.setup_s = c.dev.timeout_s;
  s.plan.limit_s = s.pair_timeout_s - 2;  // leaves 2 s for the half to reach rank 0
  return s;
}

int plan_only(const Cli& c, const accept::Spec& spec) {
  if (c.json_out.empty()) {
    std::cout << plan_text(c, spec);
    return 0;
  }
  const std::string text = plan_json(c, spec);
  std::ofstream out(c.json_out);
  out << text;
  if (!out.flush()) throw UsageError(fmt::format("--json {}: cannot write the file", c.json_out));
  std::cout << fmt::format("{} nodes: the plan is in {}\n", c.plan_nodes, c.json_out);
  return 0;
}

// fabench-accept as a job of the N-rank skeleton (world/job_app.hpp): the PairJob on every
// rank (job.hpp), the rounds, judgement and reports on rank 0 (session.hpp). A lost rank costs
// only its pairs (PairJob::driver_options).
class AcceptJob final : public world::CliJob<Cli, world::AppJob> {
 public:
  [[nodiscard]] Text text() const override {
    return {"fabench-accept",
            "fabench-accept: every pair of N nodes, judged against the link rate and the fleet, culprit named",
            help_footer(), false};
  }

  std::optional<int> before_launch(CLI::App& app) override {
    spec_ = build_spec(c_);
    (void)bw_bytes(c_);
    if (c_.plan) {
      // The judging thresholds judge measurements a plan does not make: refused, not ignored.
      for (const char* f : {"--port-gbps", "--min-bw-fraction", "--min-bidir-fraction", "--max-p99-us", "--outlier-k",
                            "--outlier-min-fraction", "--zero-counters", "--node-bad-fraction"}) {
        if (app.count(f) > 0) {
          throw UsageError(
              fmt::format("{} does not apply to --plan: it judges measurements, and a plan makes none", f));
        }
      }
      return plan_only(c_, spec_);
    }
    if (c_.plan_nodes != 0) throw UsageError("--nodes goes with --plan (a run takes its node count from the launcher)");
    if (c_.plan_rounds != "8") throw UsageError("--rounds goes with --plan (a run measures every round)");
    settings_ = settings_of(c_);
    return std::nullopt;
  }

  void check_size(const ctrl::Bootstrap& boot) const override {
    if (boot.size() < 2) {
      throw UsageError(
          fmt::format("fabench-accept needs at least 2 ranks, but {} was launched (mpirun -np N, srun -n "
                      "N or fabench-launch -n N)",
                      boot.size()));
    }
  }
  [[nodiscard]] std::string agreement() const override {
    return fmt::format("accept s={} D={} q={} t={} u={} lat={} timeout={}", settings_.link.bw_bytes, c_.seconds, c_.qps,
                       c_.depth, c_.ranks.qp_timeout, c_.lat_iters, c_.dev.timeout_s);
  }
  [[nodiscard]] bool followers_warn() const override { return true; }

  std::unique_ptr<world::Job> set_up(const world::Rank& rank) override {
    settings_.plan.spin_before_yield = rank.spin_before_yield;
    spdlog::debug("rank {} of {} on {} port {}", rank.boot.rank(), rank.boot.size(), rank.where(),
                  rank.ctx->port().port_num);
    nodes_ = gather_nodes(rank.boot, *rank.ctx);
    return std::make_unique<PairJob>(rank.boot, *rank.ctx, settings_);
  }
  [[nodiscard]] world::DriverOptions driver_options(const world::Rank& /*rank*/) const override {
    return PairJob::driver_options(settings_);
  }

  int lead(const world::Rank& rank, world::Leader& driver) override {
    std::vector<std::string> names;
    for (const auto& n : nodes_) names.push_back(n.name);
    const accept::Schedule schedule = build_schedule(c_, rank.boot.size(), names);
    const LeadOutputs out{c_.json_out, c_.junit_out, c_.pairs_file, c_.schedule};
    return acceptbench::lead(driver, rank.boot, *rank.ctx, spec_, settings_, out, nodes_, schedule);
  }

 private:
  accept::Spec spec_;
  RunSettings settings_;
  std::vector<accept::Node> nodes_;
};

}  // namespace

int accept_main(int argc, char** argv) {
  AcceptJob job;
  return world::job_main(argc, argv, job);
}

}  // namespace fabench::acceptbench
