#include "fabench/harness/app.hpp"

#include <atomic>
#include <charconv>
#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>
#include <stdexcept>
#include <thread>

#include <CLI/CLI.hpp>
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "fabench/ctrl/channel.hpp"
#include "fabench/ctrl/wire.hpp"
#include "fabench/harness/cli.hpp"
#include "fabench/harness/peer.hpp"
#include "fabench/harness/report.hpp"
#include "fabench/harness/samples.hpp"
#include "fabench/harness/server.hpp"

namespace fabench::harness {

namespace {

std::vector<std::string> split(const std::string& text, char sep = ',') {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const auto pos = text.find(sep, start);
    out.push_back(text.substr(start, pos - start));
    if (pos == std::string::npos) break;
    start = pos + 1;
  }
  return out;
}

struct Cli {
  std::string host;
  std::string device;
  std::string peer_device;
  unsigned ib_port = 0;
  int gid_index = -1;
  std::string sizes;
  bool all = false;
  std::uint64_t iters = 0;
  double duration_s = 0;
  std::uint32_t qps = 1;
  std::uint32_t tx_depth = 0;
  std::uint32_t rx_depth = 512;
  std::uint32_t post_list = 1;
  std::uint32_t cq_mod = 0;
  int inline_bytes = -1;
  bool bidir = false;
  std::string connections = "RC";
  std::string ops = "write";
  std::string atomic_type;
  std::uint32_t mtu = 0;
  std::uint16_t port = 18515;
  bool events = false;
  bool cpu_freq = false;
  bool rdma_cm = false;
  unsigned sl = 0;
  unsigned tos = 0;
  std::string bind;
  std::string max_mem = "4G";
  double timeout_s = 30;
  double handshake_s = 3;
  bool loopback = false;
  bool once = false;
  bool verbose = false;
};

void add_options(CLI::App& app, Cli& c, Kind kind) {
  const bool lat = kind == Kind::kLatency;
  app.add_option("host", c.host, "Server to connect to (omit to serve; see --loopback)");
  app.add_option("-d,--ib-dev", c.device, "RDMA device (default: first with an ACTIVE port)");
  app.add_option("--peer-device", c.peer_device, "With --loopback: device of the other end (default: same as -d)");
  app.add_option("-i,--ib-port", c.ib_port, "Device port (default: first ACTIVE)")->check(whole_number("-i", 1, 255));
  app.add_option("-x,--gid-index", c.gid_index, "GID index (default: RoCE v2 over IPv4 first, like perftest)")
      ->check(whole_number("-x", 0, 65535));
  app.add_option("-s,--size", c.sizes, fmt::format("Message size(s) in bytes, a list like 2,64,4K (default {})",
                                                   lat ? "2" : "65536"));
  app.add_flag("-a,--all", c.all, "Sweep sizes 2 B .. 8 MiB by powers of two");
  app.add_option("-n,--iters", c.iters, "Fixed iteration count per benchmark run (default: Google Benchmark's adaptive count)")
      ->check(whole_number("-n", 1, std::numeric_limits<std::int64_t>::max()));
  app.add_option("-D,--duration", c.duration_s, "Run each benchmark for at least this many seconds")
      ->check(positive_seconds("-D"));
  app.add_option("-c,--connection", c.connections, "Transport(s): RC, UC, UD or a list (default RC)");
  app.add_option("--op", c.ops,
                 lat ? "Operation(s): write, send, read, atomic_fadd, atomic_cswap, a list, or all (default write)"
                     : "Operation(s): write, send, read, a list, or all (default write)");
  if (lat) {
    app.add_option("-A,--atomic_type", c.atomic_type, "Atomic latency: FETCH_AND_ADD or CMP_AND_SWAP (as ib_atomic_lat)");
  }
  app.add_option("-t,--tx-depth", c.tx_depth, fmt::format("Send queue depth (default {})", lat ? 2 : 128))
      ->check(whole_number("-t", 1, 1 << 20));
  app.add_option("-r,--rx-depth", c.rx_depth, "Receive queue depth for send/recv (default 512)")
      ->check(whole_number("-r", 1, 1 << 20));
  if (!lat) {
    app.add_option("-q,--qp", c.qps, "Queue pairs (default 1)")->check(whole_number("-q", 1, 1024));
    app.add_option("-l,--post_list", c.post_list, "WRs per ibv_post_send call (default 1)")
        ->check(whole_number("-l", 1, 1 << 20));
    app.add_option("-Q,--cq-mod", c.cq_mod, "One signaled completion every N WRs (default 100, capped at -t)")
        ->check(whole_number("-Q", 1, 1 << 20));
    app.add_flag("-b,--bidirectional", c.bidir, "Both ends send at once");
  }
  app.add_option("-I,--inline_size", c.inline_bytes, "Inline payloads up to this size (default: device max, at most 220)")
      ->check(whole_number("-I", 0, 65536));
  app.add_option("-m,--mtu", c.mtu, "Path MTU: 256, 512, 1024, 2048 or 4096 (default: active MTU)")
      ->check(whole_number("-m", 256, 4096));
  app.add_option("-p,--port", c.port, "TCP port of the control connection (default 18515)")
      ->check(whole_number("-p", 1, 65535));
  app.add_flag("-e,--events", c.events, "Wait on completion events instead of polling");
  app.add_flag("-F,--CPU-freq", c.cpu_freq, "Accepted for perftest compatibility; fabench times with CLOCK_MONOTONIC");
  app.add_flag("-R,--rdma_cm", c.rdma_cm, "Connect queue pairs with rdma_cm (not available in this version)");
  app.add_option("-S,--sl", c.sl, "Service level (default 0)")->check(whole_number("-S", 0, 15));
  app.add_option("-T,--tos", c.tos, "Traffic class / ToS (default 0)")->check(whole_number("-T", 0, 255));
  app.add_option("--bind", c.bind, "Server: address to listen on (default: all)");
  app.add_option("--max-mem", c.max_mem, "Server: largest buffer a client may ask for (default 4G)");
  app.add_option("--timeout", c.timeout_s, "Seconds to wait for a peer or for progress before giving up (default 30)")
      ->check(positive_seconds("--timeout"));
  app.add_option("--handshake-timeout", c.handshake_s,
                 "Server: seconds a new connection has to send a valid Hello before it is dropped (default 3)")
      ->check(positive_seconds("--handshake-timeout"));
  app.add_flag("--loopback", c.loopback, "Run both ends in this process (one device, or -d A --peer-device B)");
  app.add_flag("--once", c.once, "Server: exit after the first client");
  app.add_flag("-v,--verbose", c.verbose, "Log more");
  app.set_version_flag("-V,--version", std::string(ctrl::build_version()));
}

std::vector<TestSpec> build_specs(const Cli& c, Kind kind) {
  std::vector<Op> ops;
  std::string op_list = c.ops;
  if (!c.atomic_type.empty()) {
    if (c.atomic_type == "FETCH_AND_ADD") op_list = "atomic_fadd";
    else if (c.atomic_type == "CMP_AND_SWAP") op_list = "atomic_cswap";
    else throw UsageError(fmt::format("-A {}: expected FETCH_AND_ADD or CMP_AND_SWAP", c.atomic_type));
  }
  if (op_list == "all") {
    op_list = kind == Kind::kLatency ? "write,send,read,atomic_fadd,atomic_cswap" : "write,send,read";
  }
  for (const auto& t : split(op_list)) {
    auto op = parse_op(t);
    if (!op) throw UsageError(fmt::format("--op {}: unknown operation (write, send, read, atomic_fadd, atomic_cswap)", t));
    if (kind == Kind::kBandwidth && is_atomic(*op)) throw UsageError("atomics are measured by fabench-lat (--op atomic_fadd)");
    ops.push_back(*op);
  }
  std::vector<ibv_qp_type> transports;
  for (const auto& t : split(c.connections)) {
    auto tr = parse_transport(t);
    if (!tr) throw UsageError(fmt::format("-c {}: unknown transport (RC, UC or UD)", t));
    transports.push_back(*tr);
  }
  if (c.all && !c.sizes.empty()) throw UsageError("-a and -s contradict each other: -a sweeps every size");
  std::vector<std::uint64_t> sizes = c.all ? all_sizes()
                                   : c.sizes.empty() ? std::vector<std::uint64_t>{kind == Kind::kLatency ? 2U : 65536U}
                                                     : parse_sizes(c.sizes);
  const bool single = ops.size() == 1 && transports.size() == 1;
  std::vector<TestSpec> specs;
  for (Op op : ops) {
    for (ibv_qp_type tr : transports) {
      const std::vector<std::uint64_t> op_sizes = is_atomic(op) ? std::vector<std::uint64_t>{kAtomicBytes} : sizes;
      for (std::uint64_t size : op_sizes) {
        TestSpec s = TestSpec::defaults(kind);
        s.op = op;
        s.transport = tr;
        s.msg_bytes = size;
        s.qps = c.qps;
        if (c.tx_depth != 0) s.tx_depth = c.tx_depth;
        s.rx_depth = c.rx_depth;
        s.post_list = c.post_list;
        // Default moderation shrinks to what the window allows (validate()).
        s.cq_mod = c.cq_mod != 0 ? c.cq_mod : std::min(s.cq_mod, s.tx_depth - std::min(s.post_list, s.tx_depth) + 1);
        s.inline_bytes = c.inline_bytes;
        s.bidirectional = c.bidir;
        s.events = c.events;
        s.mtu_bytes = c.mtu;
        s.gid_index = c.gid_index;
        s.sl = static_cast<std::uint8_t>(c.sl);
        s.traffic_class = static_cast<std::uint8_t>(c.tos);
        if (auto bad = validate(s); !bad.empty()) {
          if (single) throw UsageError(bad);
          continue;  // lists: only the combinations that exist (no read over UD)
        }
        specs.push_back(s);
      }
    }
  }
  if (specs.empty()) throw UsageError("no valid combination of --op and -c (read and atomics need RC, write RC or UC)");
  return specs;
}

void check_contradictions(const Cli& c) {
  if (c.loopback && !c.host.empty()) throw UsageError("--loopback runs both ends here; do not also give a host");
  if (!c.peer_device.empty() && !c.loopback) throw UsageError("--peer-device needs --loopback");
  if (c.iters > 0 && c.duration_s > 0) throw UsageError("-n and -D contradict each other: fixed count or duration");
  if (c.rdma_cm) throw UsageError("-R (rdma_cm connection setup) is not available in this version of fabench");
  if (!c.host.empty() && (!c.bind.empty() || c.once)) throw UsageError("--bind and --once are server options");
  if (c.mtu != 0 && c.mtu != 256 && c.mtu != 512 && c.mtu != 1024 && c.mtu != 2048 && c.mtu != 4096) {
    throw UsageError(fmt::format("-m {}: MTU must be 256, 512, 1024, 2048 or 4096", c.mtu));
  }
}

bool wants_help(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "-h" || a == "--help") return true;
  }
  return false;
}

void print_benchmark_flags() {
  std::cout << "\nGoogle Benchmark flags pass through unchanged, for example:\n"
               "  --benchmark_filter=REGEX        run only matching benchmarks (e.g. 'write_lat/rc/.*')\n"
               "  --benchmark_format=console|json|csv\n"
               "  --benchmark_out=FILE --benchmark_out_format=json|csv|console\n"
               "  --benchmark_repetitions=N --benchmark_report_aggregates_only=true\n"
               "  --benchmark_min_time=SECONDS   (same as -D)\n"
               "  --benchmark_list_tests=true\n";
}

}  // namespace

std::vector<std::uint64_t> all_sizes() {
  std::vector<std::uint64_t> out;
  for (std::uint64_t s = 2; s <= (8ULL << 20); s *= 2) out.push_back(s);
  return out;
}

std::uint64_t parse_bytes(const std::string& text) {
  if (text.empty()) throw std::invalid_argument("empty size");
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc{} || ptr == text.data()) throw std::invalid_argument(fmt::format("'{}' is not a size", text));
  std::uint64_t mult = 1;
  const std::string_view suffix(ptr, static_cast<std::size_t>(end - ptr));
  if (suffix == "" || suffix == "B") mult = 1;
  else if (suffix == "K" || suffix == "k" || suffix == "KiB") mult = 1ULL << 10;
  else if (suffix == "M" || suffix == "MiB") mult = 1ULL << 20;
  else if (suffix == "G" || suffix == "GiB") mult = 1ULL << 30;
  else throw std::invalid_argument(fmt::format("'{}': unknown unit '{}' (use K, M or G)", text, suffix));
  if (value > (~0ULL) / mult) throw std::invalid_argument(fmt::format("'{}' is too large", text));
  return value * mult;
}

std::vector<std::uint64_t> parse_sizes(const std::string& text) {
  std::vector<std::uint64_t> out;
  for (const auto& t : split(text)) {
    const auto v = parse_bytes(t);
    if (v == 0) throw std::invalid_argument("message size 0 is not measurable");
    out.push_back(v);
  }
  return out;
}

int bench_main(int argc, char** argv, Kind kind) {
  const std::string prog = kind == Kind::kLatency ? "fabench-lat" : "fabench-bw";
  spdlog::set_default_logger(spdlog::stderr_color_mt(prog));
  spdlog::set_pattern("%n: %^%l%$: %v");

  CLI::App app(kind == Kind::kLatency
                   ? "fabench-lat: RDMA latency (write/send ping-pong, read, atomics), reported through Google Benchmark"
                   : "fabench-bw: RDMA bandwidth and message rate (write, read, send), reported through Google Benchmark",
               prog);
  Cli c;
  add_options(app, c, kind);
  app.footer(
      "Modes: no host = server (serves any number of clients, one at a time); host = client; --loopback = both\n"
      "ends in this process. Flags keep perftest's meaning, so 'ib_write_lat -d mlx5_0 host' becomes\n"
      "'fabench-lat -d mlx5_0 host'.");
  if (wants_help(argc, argv)) {
    std::cout << app.help();
    print_benchmark_flags();
    return 0;
  }
  // Google Benchmark takes its --benchmark_* flags out of argv; CLI11 parses the rest.
  benchmark::Initialize(&argc, argv);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::cerr << prog << ": error: " << parse_error_text(e) << " (see --help)\n";
    return 2;
  }
  if (c.verbose) spdlog::set_level(spdlog::level::debug);

  PeerOptions popts;
  popts.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(c.timeout_s * 1000));
  popts.handshake = std::chrono::milliseconds(static_cast<std::int64_t>(c.handshake_s * 1000));
  std::vector<TestSpec> specs;
  try {
    check_contradictions(c);
    popts.max_mem_bytes = parse_bytes(c.max_mem);
    if (!c.host.empty() || c.loopback) specs = build_specs(c, kind);
  } catch (const std::exception& e) {
    std::cerr << prog << ": error: " << e.what() << "\n";
    return 2;
  }

  try {
    ContextOptions copts;
    copts.device = c.device;
    copts.ib_port = static_cast<std::uint8_t>(c.ib_port);
    copts.gid_index = c.gid_index;
    const Context ctx(copts);

    if (c.host.empty() && !c.loopback) {
      auto listener = ctrl::Listener::bind(c.bind, c.port);
      spdlog::info("serving on {} with {} port {} ({}, GID index {}); Ctrl-C stops", listener.address(),
                   ctx.device().name(), ctx.port().port_num, ctx.port().link_layer_name, ctx.gid_index());
      std::atomic<bool> stop{false};
      serve(listener, ctx, popts, stop, c.once);
      return 0;
    }

    for (const auto& s : specs) {
      if (auto bad = check_device_limits(ctx, s); !bad.empty()) {
        std::cerr << prog << ": error: " << s.name() << ": " << bad << "\n";
        return 2;
      }
    }

    // Loopback: the follower is a thread of this process serving exactly one
    // client over 127.0.0.1, so both modes share every code path.
    std::unique_ptr<Context> peer_ctx;
    std::optional<ctrl::Listener> loop_listener;
    std::thread follower;
    std::atomic<bool> stop{false};
    std::string host = c.host;
    std::uint16_t port = c.port;
    if (c.loopback) {
      ContextOptions pc = copts;
      pc.device = c.peer_device.empty() ? ctx.device().name() : c.peer_device;
      pc.ib_port = c.peer_device.empty() ? ctx.port().port_num : 0;
      peer_ctx = std::make_unique<Context>(pc);
      loop_listener.emplace(ctrl::Listener::bind("127.0.0.1", 0));
      host = "127.0.0.1";
      port = loop_listener->port();
      follower = std::thread([&] { serve(*loop_listener, *peer_ctx, popts, stop, true); });
    }
    struct JoinGuard {
      std::thread& t;
      std::atomic<bool>& stop;
      ~JoinGuard() {
        stop = true;
        if (t.joinable()) t.join();
      }
    } join_guard{follower, stop};

    ctrl::ChannelOptions chopts;
    chopts.timeout = popts.timeout;
    Leader leader(ctrl::Channel::connect(host, port, popts.timeout, chopts), ctx, popts);
    add_fabric_context(ctx, &leader.peer(), c.loopback ? "loopback" : "client");

    Registration reg;
    reg.iterations = c.iters;
    reg.min_time_s = c.duration_s;
    int failures = 0;
    Samples samples;
    for (const auto& spec : specs) {
      register_fabric_benchmark(
          spec.name(),
          [&leader, &failures, &samples, spec](benchmark::State& state) {
            const auto n = static_cast<std::uint64_t>(state.max_iterations);
            if (leader.dead()) {
              ++failures;
              state.SkipWithError(("peer gone: " + leader.dead_reason()).c_str());
              return;
            }
            if (spec.kind == Kind::kLatency && samples.capacity() < n) samples.reserve(n);
            Leader::Outcome out;
            while (state.KeepRunningBatch(static_cast<benchmark::IterationCount>(n))) {
              try {
                out = leader.run(spec, n, &samples);
              } catch (const std::exception& e) {
                ++failures;
                state.SkipWithError(e.what());
                break;
              }
              const double seconds = spec.kind == Kind::kLatency && reports_half_rtt(spec.op) ? out.mine.seconds / 2
                                                                                             : out.mine.seconds;
              state.SetIterationTime(seconds);
            }
            if (state.error_occurred()) return;
            const std::uint64_t wrong = out.mine.wrong + out.theirs.wrong;
            state.counters["wrong"] = static_cast<double>(wrong);
            if (spec.kind == Kind::kLatency) {
              try {
                set_latency_counters(state, samples.stats(), reports_half_rtt(spec.op));
              } catch (const std::exception& e) {
                ++failures;
                state.SkipWithError(e.what());
                return;
              }
            } else {
              set_bandwidth_counters(state, out.mine, out.theirs, spec.bidirectional);
              if (spec.op == Op::kSend && spec.transport != IBV_QPT_RC && out.theirs.received < out.mine.messages) {
                state.counters["lost"] = static_cast<double>(out.mine.messages - out.theirs.received);
              }
            }
            if (wrong > 0) {
              ++failures;
              state.SkipWithError(fmt::format("{} payload bytes/results differ from what was sent", wrong).c_str());
            }
          },
          reg);
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    leader.goodbye();
    if (failures > 0) {
      std::cerr << prog << ": " << failures << " benchmark run(s) failed\n";
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << prog << ": error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace fabench::harness
