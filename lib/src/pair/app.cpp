#include "fabench/pair/app.hpp"

#include <algorithm>
#include <atomic>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>

#include <CLI/CLI.hpp>
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "fabench/ctrl/channel.hpp"
#include "fabench/ctrl/token.hpp"
#include "fabench/harness/cli.hpp"
#include "fabench/harness/clock.hpp"
#include "fabench/harness/context.hpp"
#include "fabench/harness/report.hpp"
#include "fabench/harness/samples.hpp"
#include "fabench/pair/options.hpp"
#include "fabench/pair/peer.hpp"
#include "fabench/pair/perftest_run.hpp"
#include "fabench/pair/report.hpp"
#include "fabench/pair/server.hpp"

namespace fabench::pair {

namespace {

using harness::Context;
using harness::Samples;

constexpr std::string_view kBenchmarkFlags =
    "\nGoogle Benchmark flags pass through unchanged, for example:\n"
    "  --benchmark_filter=REGEX        run only matching benchmarks (e.g. 'write_lat/rc/.*')\n"
    "  --benchmark_format=console|json|csv\n"
    "  --benchmark_out=FILE --benchmark_out_format=json|csv|console\n"
    "  --benchmark_repetitions=N --benchmark_report_aggregates_only=true\n"
    "  --benchmark_min_time=SECONDS   (same as -D)\n"
    "  --benchmark_list_tests=true\n";

// Parses argv into `o` (Google Benchmark takes its --benchmark_* flags out
// first). Returns an exit status when the program should end here: help,
// version, or a usage error already printed.
std::optional<int> parse_command_line(const std::string& prog, Kind kind, int& argc, char** argv, Options& o) {
  CLI::App app(
      kind == Kind::kLatency
          ? "fabench-lat: RDMA latency (write/send ping-pong, read, atomics), reported through Google Benchmark"
          : "fabench-bw: RDMA bandwidth and message rate (write, read, send), reported through Google Benchmark",
      prog);
  add_options(app, o, kind);
  app.footer(
      "Modes: no host = server (serves any number of clients, one at a time); host = client;\n"
      "--loopback = both ends in this process. Flags keep perftest's meaning (-b, -e included), so\n"
      "'ib_write_lat -d mlx5_0 host' becomes 'fabench-lat -d mlx5_0 host'. --help-all: every flag.");
  return harness::parse_command_line(app, argc, argv, prog, kBenchmarkFlags);
}

// --loopback: the follower is a thread of this process serving exactly one
// client over 127.0.0.1, so both modes share every code path. Destroyed
// after the Leader (declare it first): stops and joins the follower.
class Loopback {
 public:
  Loopback(const Options& o, const Context& ctx, const PeerOptions& popts)
      : popts_(popts),
        ctx_(peer_context(o, ctx)),
        listener_(ctrl::Listener::bind("127.0.0.1", 0)),
        follower_([this] { serve(listener_, ctx_, popts_, stop_, true); }) {}
  ~Loopback() {
    stop_ = true;
    if (follower_.joinable()) follower_.join();
  }
  Loopback(const Loopback&) = delete;
  Loopback& operator=(const Loopback&) = delete;

  [[nodiscard]] std::uint16_t port() const noexcept { return listener_.port(); }

 private:
  static harness::ContextOptions peer_context(const Options& o, const Context& ctx) {
    harness::ContextOptions pc = o.dev.context_options();
    pc.device = o.peer_device.empty() ? ctx.device().name() : o.peer_device;
    pc.ib_port = o.peer_device.empty() ? ctx.port().port_num : 0;
    return pc;
  }

  PeerOptions popts_;
  Context ctx_;
  ctrl::Listener listener_;
  std::atomic<bool> stop_{false};
  std::thread follower_;
};

// The counters of a completed run; false (and SkipWithError) when the
// results say the run failed after all.
bool report_run(benchmark::State& state, const TestSpec& spec, const Leader::Outcome& out, const Samples& samples,
                const CounterSelection& counters) {
  const std::uint64_t wrong = out.mine.wrong + out.theirs.wrong;
  state.counters["wrong"] = static_cast<double>(wrong);
  set_counter_deltas(state, out.my_counters, out.their_counters, counters);
  if (spec.kind == Kind::kLatency) {
    try {
      harness::set_latency_counters(state, samples.stats(), reports_half_rtt(spec.op));
    } catch (const std::exception& e) {
      state.SkipWithError(e.what());
      return false;
    }
    if (spec.load) set_load_counters(state, out.my_load, out.their_load, spec.load->bidirectional);
  } else {
    set_bandwidth_counters(state, out.mine, out.theirs, spec.bidirectional);
    if (spec.op == Op::kSend && spec.transport != IBV_QPT_RC && out.theirs.received < out.mine.messages) {
      state.counters["lost"] = static_cast<double>(out.mine.messages - out.theirs.received);
    }
  }
  if (wrong > 0) {
    state.SkipWithError(fmt::format("{} payload bytes/results differ from what was sent", wrong).c_str());
    return false;
  }
  return true;
}

// One Google Benchmark call: the leader runs the iteration count Google
// Benchmark chose on both ends; the manual time is the leader's engine time
// (halved for write/send: one-way latency). Failures count in `failures`.
// `warm_up` (--perform_warm_up): one unmeasured run first, then cleared.
void run_benchmark(benchmark::State& state, Leader& leader, const TestSpec& spec, Samples& samples, int& failures,
                   bool& warm_up, const CounterSelection& counters) {
  const auto n = static_cast<std::uint64_t>(state.max_iterations);
  if (leader.dead()) {
    ++failures;
    state.SkipWithError(("peer gone: " + leader.dead_reason()).c_str());
    return;
  }
  const std::uint64_t warm_n = warm_up ? warm_up_iterations(n) : 0;
  if (spec.kind == Kind::kLatency && samples.capacity() < std::max(n, warm_n)) {
    samples.reserve(std::max(n, warm_n), [&leader] { leader.keepalive(); });
  }
  Leader::Outcome out;
  if (warm_up) {
    warm_up = false;
    try {
      static_cast<void>(leader.run(spec, warm_n, &samples));
    } catch (const std::exception& e) {
      ++failures;
      state.SkipWithError(fmt::format("warm-up: {}", e.what()).c_str());
    }
  }
  while (state.KeepRunningBatch(static_cast<benchmark::IterationCount>(n))) {
    try {
      out = leader.run(spec, n, &samples);
    } catch (const std::exception& e) {
      ++failures;
      state.SkipWithError(e.what());
      break;
    }
    const bool half = spec.kind == Kind::kLatency && reports_half_rtt(spec.op);
    state.SetIterationTime(half ? out.mine.seconds / 2 : out.mine.seconds);
  }
  if (state.error_occurred()) return;
  if (!report_run(state, spec, out, samples, counters)) ++failures;
  leader.keepalive();  // if due: sorting a long run's samples for its statistics takes a while
}

// Client and loopback: connect, register one benchmark per spec, run them.
int run_client(const std::string& prog, const Options& o, const Context& ctx, const std::vector<TestSpec>& specs,
               const PeerOptions& popts) {
  for (const auto& s : specs) {
    if (auto bad = check_device_limits(ctx, s)) throw UserError(fmt::format("{}: {}", s.name(), bad->what()));
  }
  std::optional<Loopback> loopback;
  if (o.loopback) loopback.emplace(o, ctx, popts);
  const std::string host = o.loopback ? "127.0.0.1" : o.host;
  const std::uint16_t port = o.loopback ? loopback->port() : o.port;

  ctrl::ChannelOptions chopts;
  chopts.timeout = popts.timeout;
  chopts.source_address = o.source_ip;
  Leader leader(ctrl::Channel::connect(host, port, popts.timeout, chopts), ctx, popts);
  harness::add_fabric_context(ctx, o.loopback ? "loopback" : "client");
  add_pair_context(leader.peer());
  if (o.rdma_cm) benchmark::AddCustomContext("connection_setup", "rdma_cm");
  if (specs.front().kind == Kind::kLatency) {
    benchmark::AddCustomContext("clock", std::string(harness::clock_name(popts.clock)));
  }
  const CounterSelection counters = counter_selection(o);
  if (counters.enabled) add_counter_context(ctx, counters);

  harness::Registration reg;
  reg.iterations = o.iters;
  reg.min_time_s = o.duration_s;
  if (o.perftest.run_infinitely && reg.min_time_s == 0) reg.min_time_s = kInfiniteRoundSeconds;
  int failures = 0;
  Samples samples;
  for (const auto& spec : specs) {
    harness::register_fabric_benchmark(
        spec.name(),
        [&leader, &failures, &samples, &counters, spec, warm_up = o.perftest.warm_up](benchmark::State& state) mutable {
          run_benchmark(state, leader, spec, samples, failures, warm_up, counters);
        },
        reg);
  }
  const auto reporter = make_perftest_reporter(o, ctx, leader, specs, samples);
  const auto display = make_display_reporter();
  const auto checks = run_perftest_rounds(reporter.get(), display.get(), o.perftest.run_infinitely);
  benchmark::Shutdown();
  // --wait_destroy: the server keeps hearing from us while we wait.
  const auto destroy_at = std::chrono::steady_clock::now() + std::chrono::seconds(o.perftest.wait_destroy_s);
  while (std::chrono::steady_clock::now() < destroy_at) {
    leader.keepalive();
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
        std::chrono::milliseconds(200), destroy_at - std::chrono::steady_clock::now()));
  }
  leader.goodbye();
  for (const auto& line : checks) std::cerr << prog << ": " << line << "\n";
  if (failures > 0) {
    std::cerr << prog << ": " << failures << " benchmark run(s) failed\n";
    return 1;
  }
  return checks.empty() ? 0 : 1;
}

int run_server(const Options& o, const Context& ctx, const PeerOptions& popts) {
  // Forked while this process is one thread: each client is served in a
  // single-threaded child with its own Context on the same device, port and GID.
  harness::ContextOptions serving = o.dev.context_options();
  serving.device = ctx.device().name();
  serving.ib_port = ctx.port().port_num;
  serving.gid_index = ctx.gid_index();
  ctrl::ServingProcess processes(client_process_body(serving, popts));
  auto listener = ctrl::Listener::bind(o.bind, o.port);
  spdlog::info("serving on {} with {} port {} ({}, GID index {}); Ctrl-C stops", listener.address(),
               ctx.device().name(), ctx.port().port_num, ctx.port().link_layer_name, ctx.gid_index());
  if (popts.token.empty()) {
    spdlog::warn(
        "no token: any host that reaches {} can use this server and up to --max-mem {} of its memory; give "
        "both ends the same {}",
        listener.address(), o.max_mem, ctrl::kTokenSources);
  } else {
    spdlog::info("clients must prove the shared token");
  }
  std::atomic<bool> stop{false};
  serve(listener, processes, popts, stop, o.once);
  return 0;
}

}  // namespace

int pair_main(int argc, char** argv, Kind kind) {
  const std::string prog = kind == Kind::kLatency ? "fabench-lat" : "fabench-bw";
  spdlog::set_default_logger(spdlog::stderr_color_mt(prog));
  spdlog::set_pattern("%n: %^%l%$: %v");

  Options o;
  if (auto rc = parse_command_line(prog, kind, argc, argv, o)) return *rc;
  if (o.dev.verbose) spdlog::set_level(spdlog::level::debug);

  return harness::run_main(prog, [&] {
    PeerOptions popts;
    popts.timeout = o.dev.timeout();
    popts.handshake = std::chrono::milliseconds(static_cast<std::int64_t>(o.handshake_s * 1000));
    popts.side = o.perftest.side;
    check_contradictions(o);
    popts.counters = !o.serves() && counter_selection(o).enabled;
    popts.max_mem_bytes = harness::parse_flag_bytes("--max-mem", o.max_mem);
    popts.token = ctrl::resolve_token(o.token, o.token_file, ctrl::process_env());
    popts.clock = harness::resolve_clock(o.clock);
    // --loopback: both ends are in this process, so a random token keeps
    // other local users off its 127.0.0.1 port.
    if (o.loopback && popts.token.empty()) {
      const auto nonce = ctrl::random_nonce();
      popts.token.assign(nonce.begin(), nonce.end());
    }
    const std::vector<TestSpec> specs = o.serves() ? std::vector<TestSpec>{} : build_specs(o, kind);

    const Context ctx(o.dev.context_options());
    if (auto bad = check_force_link(o.perftest, ctx)) throw *bad;
    if (!o.serves() && kind == Kind::kLatency && popts.clock == harness::ClockSource::kTsc && !harness::tsc_trusted()) {
      const std::string source = harness::kernel_clocksource();
      spdlog::warn(
          "--clock tsc: the kernel's clocksource is {}, not the TSC: a sample taken across two CPUs whose TSCs "
          "differ is off by that difference (taskset -c CPU keeps the process on one)",
          source.empty() ? "unknown" : source);
    }
    return o.serves() ? run_server(o, ctx, popts) : run_client(prog, o, ctx, specs, popts);
  });
}

}  // namespace fabench::pair
