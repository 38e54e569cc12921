#include "fabench/pair/perftest_run.hpp"

#include <algorithm>
#include <csignal>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "fabench/pair/report.hpp"

namespace fabench::pair {

namespace {

volatile std::sig_atomic_t g_stop_rounds = 0;

extern "C" void stop_rounds(int /*signal*/) { g_stop_rounds = 1; }

// SIGINT/SIGTERM end --run_infinitely after the round in progress; the
// handler is one-shot, so a second signal ends the process as usual.
void install_stop_handler() {
  struct sigaction sa {};
  sa.sa_handler = stop_rounds;
  sa.sa_flags = SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

PerftestBanner banner_for(const harness::Context& ctx, const Leader& leader, const SideOptions& side_options,
                          const TestSpec& spec) {
  PerftestBanner b;
  b.spec = spec;
  b.device = ctx.device().name();
  b.link_layer = ctx.port().is_ethernet() ? "Ethernet" : "IB";
  b.gid_index = ctx.gid_index();
  const std::uint32_t active = std::min(ctx.port().active_mtu_bytes, leader.peer().active_mtu_bytes);
  b.mtu_bytes = spec.mtu_bytes != 0 ? std::min(spec.mtu_bytes, active) : active;
  b.outs = std::min<std::uint32_t>(side_options.max_rd_atomic,
                                   static_cast<std::uint32_t>(ctx.attributes().max_qp_init_rd_atom));
  if (const Side* side = leader.side(); side != nullptr && side->spec() == spec) {
    b.local = side->endpoints();
    b.remote = side->remote();
    b.inline_bytes = side->inline_threshold();
  }
  return b;
}

}  // namespace

std::unique_ptr<PerftestReporter> make_perftest_reporter(const Options& o, const harness::Context& ctx,
                                                         const Leader& leader, const std::vector<TestSpec>& specs,
                                                         const harness::Samples& samples) {
  const PerftestFlags& f = o.perftest;
  if (!f.needs_rows()) return nullptr;
  std::unique_ptr<benchmark::BenchmarkReporter> inner;
  if (!f.perftest_format()) inner = make_display_reporter();
  const SideOptions side_options = f.side;
  auto banner = [&ctx, &leader, side_options](const TestSpec& spec) {
    return banner_for(ctx, leader, side_options, spec);
  };
  const bool duration = o.duration_s > 0 || f.run_infinitely;
  return std::make_unique<PerftestReporter>(f, specs, duration, banner, &samples, std::move(inner));
}

std::vector<std::string> run_perftest_rounds(PerftestReporter* reporter, benchmark::BenchmarkReporter* display,
                                             bool run_infinitely) {
  if (run_infinitely) install_stop_handler();
  std::vector<std::string> failures;
  do {
    benchmark::RunSpecifiedBenchmarks(reporter != nullptr ? reporter : display);
    if (reporter != nullptr) failures = reporter->failures();
  } while (run_infinitely && g_stop_rounds == 0);
  return failures;
}

std::uint64_t warm_up_iterations(std::uint64_t measured) noexcept {
  // Enough to touch every buffer and fill the queues, short next to the run.
  return std::clamp<std::uint64_t>(measured, 100, 1000);
}

std::optional<UserError> check_force_link(const PerftestFlags& f, const harness::Context& ctx) {
  if (f.force_link.empty()) return std::nullopt;
  const bool want_ethernet = f.force_link == "Ethernet";
  if (want_ethernet == ctx.port().is_ethernet()) return std::nullopt;
  return UserError(fmt::format("--force-link {}: {} port {} is {}", f.force_link, ctx.device().name(),
                               ctx.port().port_num, ctx.port().link_layer_name));
}

}  // namespace fabench::pair
