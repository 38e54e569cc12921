#include "fabench/pair/options.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <limits>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "fabench/ctrl/wire.hpp"
#include "fabench/harness/clock.hpp"
#include "fabench/harness/counters.hpp"
#include "fabench/pair/load.hpp"
#include "fabench/pair/perftest_flags.hpp"

namespace fabench::pair {

namespace {

using harness::positive_seconds;
using harness::UsageError;
using harness::whole_number;

// Shown by --help-all only: what most runs leave at its default.
constexpr const char* kMoreGroup = "Server, link and security";

void add_queue_options(CLI::App& app, Options& o, bool lat) {
  app.add_option("-t,--tx-depth", o.tx_depth, fmt::format("Send queue depth, WRs (default {})", lat ? 2 : 128))
      ->check(whole_number("-t", 1, 1 << 20));
  app.add_option("-r,--rx-depth", o.rx_depth,
                 lat ? "Receive queue depth for send, WRs (default 512; UD/UC with -n: min(-n, 16000), as perftest)"
                     : "Receive queue depth for send, WRs (default 512)")
      ->check(whole_number("-r", 1, 1 << 20));
  if (!lat) {
    app.add_option("-q,--qps", o.qps, "Queue pairs (default 1)")->check(whole_number("-q", 1, 1024));
    app.add_option("-l,--post-list", o.post_list, "WRs per ibv_post_send call (default 1)")
        ->check(whole_number("-l", 1, 1 << 20));
    app.add_option("-Q,--cq-mod", o.cq_mod, "One signaled completion every N WRs (default 100, at most -t)")
        ->check(whole_number("-Q", 1, 1 << 20));
    app.add_flag("-b,--bidirectional", o.bidir, "Both ends send at once (perftest's -b; not nccl-tests' min bytes)");
    // perftest's spellings of the two above.
    app.add_option("--qp", o.qps, "Same as -q/--qps (perftest's spelling)")
        ->check(whole_number("-q", 1, 1024))
        ->group(kPerftestGroup);
    app.add_option("--post_list", o.post_list, "Same as -l/--post-list (perftest's spelling)")
        ->check(whole_number("-l", 1, 1 << 20))
        ->group(kPerftestGroup);
  }
  app.add_option("-I,--inline_size", o.inline_bytes, "Inline payloads up to N bytes (default: device max, at most 220)")
      ->check(whole_number("-I", 0, 65536));
  app.add_option("-m,--mtu", o.mtu, fmt::format("Path MTU, bytes: {} (default: the port's active MTU)",
                                                harness::kPathMtuChoices))
      ->check(whole_number("-m", 256, 4096));
}

void add_mode_options(CLI::App& app, Options& o) {
  app.add_option("-p,--port", o.port, "TCP port of the control connection (default 18515)")
      ->check(whole_number("-p", 1, 65535));
  app.add_flag("-e,--events", o.events,
               "Wait on completion events instead of polling (perftest's -e; not nccl-tests' max bytes)");
  app.add_flag("-R,--rdma_cm", o.rdma_cm,
               "Client: connect the QPs through rdma_cm toward the server's address (RC, UC, UD)");
  app.add_flag("--loopback", o.loopback, "Run both ends in this process (one device, or -d A --peer-device B)");
  app.add_flag("-F,--CPU-freq", o.cpu_freq, "Accepted for perftest; fabench measures the TSC's rate (see --clock)")
      ->group(kMoreGroup);
  app.add_flag("--ipv6", o.dev.ipv6_gid, "RoCE: pick a RoCE v2 GID with an IPv6 address, not IPv4 (-x overrides)")
      ->group(kMoreGroup);
  app.add_option("-S,--sl", o.sl, "Service level, 0-15 (default 0)")->check(whole_number("-S", 0, 15))->group(kMoreGroup);
  app.add_option("-T,--tos,--tclass", o.tos, "Traffic class of the GRH, 0-255 (default 0)")
      ->check(whole_number("-T", 0, 255))
      ->group(kMoreGroup);
  app.add_option("--bind", o.bind, "Server: address to listen on (default: all)")->type_name("ADDR")->group(kMoreGroup);
  app.add_option("--source_ip", o.source_ip, "Client: local IP address of the control connection (default: routed)")
      ->type_name("ADDR")
      ->group(kMoreGroup);
  app.add_option("--max-mem", o.max_mem, "Server: largest buffer a client may ask for, bytes, K/M/G (default 4G)")
      ->type_name("SIZE")
      ->group(kMoreGroup);
  app.add_option("--handshake-timeout", o.handshake_s,
                 "Server: seconds a new connection has to send a valid Hello (default 3)")
      ->check(positive_seconds("--handshake-timeout"))
      ->group(kMoreGroup);
  app.add_flag("--once", o.once, "Server: exit after the first client")->group(kMoreGroup);
  app.add_option("--counters", o.counters,
                 "Port counter changes per run: default (bytes, packets, errors, congestion), all, none, or names")
      ->type_name("LIST")
      ->group(kMoreGroup);
  app.add_option("--token", o.token, "Shared secret both ends must prove (visible in ps: prefer --token-file)")
      ->group(kMoreGroup);
  app.add_option("--token-file", o.token_file, "Read the shared secret from FILE (default: FABENCH_TOKEN)")
      ->type_name("FILE")
      ->group(kMoreGroup);
  harness::help_all_only(app, kMoreGroup);
}

std::vector<Op> parse_ops(const Options& o, Kind kind) {
  std::string op_list = o.ops;
  if (!o.atomic_type.empty()) {
    if (o.ops_given) {
      throw UsageError(fmt::format("-A {} and --op {} contradict each other: -A picks the atomic operation",
                                   o.atomic_type, o.ops));
    }
    if (o.atomic_type == "FETCH_AND_ADD") op_list = "atomic_fadd";
    else if (o.atomic_type == "CMP_AND_SWAP") op_list = "atomic_cswap";
    else throw UsageError(fmt::format("-A {}: expected FETCH_AND_ADD or CMP_AND_SWAP", o.atomic_type));
  }
  if (op_list == "all") {
    op_list = kind == Kind::kLatency ? "write,send,read,atomic_fadd,atomic_cswap" : "write,send,read";
  }
  std::vector<Op> ops;
  for (const auto& t : harness::split_list(op_list)) {
    auto op = parse_op(t);
    if (!op)
      throw UsageError(fmt::format("--op {}: unknown operation (write, send, read, atomic_fadd, atomic_cswap)", t));
    if (kind == Kind::kBandwidth && is_atomic(*op))
      throw UsageError("atomics are measured by fabench-lat (--op atomic_fadd)");
    ops.push_back(*op);
  }
  return ops;
}

std::vector<ibv_qp_type> parse_transports(const Options& o) {
  std::vector<ibv_qp_type> transports;
  for (const auto& t : harness::split_list(o.connections)) {
    auto tr = parse_transport(t);
    if (!tr && (t == "XRC" || t == "DC" || t == "SRD"))
      throw UsageError(fmt::format("-c {}: the {} transport is not supported (RC, UC or UD)", t, t));
    if (!tr) throw UsageError(fmt::format("-c {}: unknown transport (RC, UC or UD)", t));
    transports.push_back(*tr);
  }
  return transports;
}

std::vector<std::uint64_t> message_sizes(const Options& o, Kind kind) {
  if (o.all && !o.sizes.empty()) throw UsageError("-a and -s contradict each other: -a sweeps every size");
  if (o.all) return harness::all_sizes();
  if (o.sizes.empty()) return {kind == Kind::kLatency ? 2U : 65536U};
  return harness::parse_sizes(o.sizes, "-s");
}

}  // namespace

// perftest's rule for UD and UC (no flow control): with a fixed iteration
// count, a receive depth left at its default (512, as -r 512 is) becomes
// min(iterations, 16000). In a send ping-pong every receive of the run is then
// posted before it and none in the loop, the work perftest times.
std::uint32_t latency_rx_depth(const Options& o, Kind kind, Op op, ibv_qp_type transport) noexcept {
  constexpr std::uint32_t kDefaultRxDepth = 512;
  constexpr std::uint64_t kUcUdMaxRxDepth = 16000;  // perftest's UC_MAX_RX
  if (kind != Kind::kLatency || op != Op::kSend || transport == IBV_QPT_RC || o.rx_depth != kDefaultRxDepth ||
      o.iters == 0) {
    return o.rx_depth;
  }
  return static_cast<std::uint32_t>(std::min(o.iters, kUcUdMaxRxDepth));
}

namespace {

TestSpec make_spec(const Options& o, Kind kind, Op op, ibv_qp_type transport, std::uint64_t size) {
  TestSpec s = TestSpec::defaults(kind);
  s.op = op;
  s.transport = transport;
  s.msg_bytes = size;
  s.qps = o.qps;
  if (o.tx_depth != 0) s.tx_depth = o.tx_depth;
  s.rx_depth = latency_rx_depth(o, kind, op, transport);
  s.post_list = o.post_list;
  // Default moderation shrinks to what the window allows (validate()).
  s.cq_mod = o.cq_mod != 0 ? o.cq_mod : std::min(s.cq_mod, s.tx_depth - std::min(s.post_list, s.tx_depth) + 1);
  s.inline_bytes = o.inline_bytes;
  s.bidirectional = o.bidir;
  s.events = o.events;
  s.mtu_bytes = o.mtu;
  s.sl = static_cast<std::uint8_t>(o.sl);
  s.traffic_class = static_cast<std::uint8_t>(o.tos);
  s.rdma_cm = o.rdma_cm && !o.serves();
  s.reversed = kind == Kind::kBandwidth && o.perftest.reversed && !o.serves();
  return s;
}

}  // namespace

void add_options(CLI::App& app, Options& o, Kind kind) {
  const bool lat = kind == Kind::kLatency;
  app.add_option("host", o.host, "Server to connect to (omit to serve; see --loopback)");
  harness::add_device_flags(app, o.dev);
  app.add_option("--peer-device", o.peer_device, "With --loopback: device of the other end (default: -d's)")
      ->type_name("DEV");
  app.add_option("-s,--size", o.sizes,
                 fmt::format("Message size(s), bytes, K/M/G, a list like 2,64,4K (default {})", lat ? "2" : "64K"))
      ->type_name("SIZES");
  app.add_flag("-a,--all", o.all, "Sweep sizes 2 B .. 8 MiB by powers of two");
  app.add_option("-n,--iters", o.iters, "Iterations per benchmark run (default: Google Benchmark's adaptive count)")
      ->check(whole_number("-n", 1, std::numeric_limits<std::int64_t>::max()));
  app.add_option("-D,--duration", o.duration_s, "Seconds to run each benchmark, at least (default: adaptive)")
      ->check(positive_seconds("-D"));
  app.add_option("-c,--connection", o.connections, "Transport(s): RC, UC, UD or a list (default RC)")
      ->type_name("LIST");
  app.add_option("--op", o.ops,
                 lat ? "Operation(s): write, send, read, atomic_fadd, atomic_cswap, a list, or all (default write)"
                     : "Operation(s): write, send, read, a list, or all (default write)")
      ->type_name("LIST")
      ->each([&o](const std::string& /*value*/) { o.ops_given = true; });
  if (lat) {
    app.add_option("-A,--atomic_type", o.atomic_type, "Atomic latency: FETCH_AND_ADD or CMP_AND_SWAP (instead of --op)")
        ->type_name("TYPE");
    app.add_option("--load", o.load,
                   "Also run each benchmark while other QPs stream: OP,SIZE[,qps=N][,rate=RATE][,bidir], "
                   "e.g. write,1M,qps=2,rate=2G (RATE in bit/s, G = 1e9)")
        ->type_name("SPEC");
    app.add_option("--clock", o.clock,
                   "Timestamps: tsc, monotonic, or auto = tsc where invariant, else monotonic (default auto)")
        ->type_name("SOURCE");
  }
  add_queue_options(app, o, lat);
  add_mode_options(app, o);
  add_perftest_flags(app, o.perftest, kind);
}

void check_contradictions(const Options& o) {
  check_perftest_flags(o.perftest, o.iters > 0);
  if (o.loopback && !o.host.empty()) throw UsageError("--loopback runs both ends here; do not also give a host");
  if (!o.peer_device.empty() && !o.loopback) throw UsageError("--peer-device needs --loopback");
  if (o.iters > 0 && o.duration_s > 0) throw UsageError("-n and -D contradict each other: fixed count or duration");
  if (o.rdma_cm && o.loopback) {
    throw UsageError(
        "-R with --loopback: rdma_cm resolves the server's address over the fabric; run a server and "
        "a client instead");
  }
  if (o.perftest.reversed && o.bidir) {
    throw UsageError("--reversed and -b contradict each other: -b already sends both ways");
  }
  if (o.rdma_cm && !o.load.empty()) {
    throw UsageError("--load with -R: the load's queue pairs connect without rdma_cm; drop one of them");
  }
  if (!o.host.empty() && (!o.bind.empty() || o.once)) throw UsageError("--bind and --once are server options");
  if (!o.source_ip.empty()) {
    if (o.serves()) throw UsageError("--source_ip is a client option (a server listens: --bind ADDRESS)");
    std::array<unsigned char, 16> addr{};
    if (::inet_pton(AF_INET, o.source_ip.c_str(), addr.data()) != 1 &&
        ::inet_pton(AF_INET6, o.source_ip.c_str(), addr.data()) != 1) {
      throw UsageError(fmt::format("--source_ip {}: not an IPv4 or IPv6 address", o.source_ip));
    }
  }
  if (auto bad = harness::check_path_mtu("-m", o.mtu)) throw *bad;
  static_cast<void>(counter_selection(o));  // its own usage errors
  static_cast<void>(harness::resolve_clock(o.clock));
  if (!o.load.empty()) {
    static_cast<void>(parse_load_spec(o.load));
    if (o.serves()) throw UsageError("--load is a client option: the server builds what each client asks for");
    if (o.perftest.needs_rows()) {
      throw UsageError("--load does not combine with perftest's report (--output, --out_json, -w, -y)");
    }
  }
}

bool CounterSelection::keeps(std::string_view name) const {
  if (!enabled) return false;
  return all || harness::counter_selected(name, names);
}

CounterSelection counter_selection(const Options& o) {
  const std::string& counters_flag = o.counters;
  const std::string& w_flag = o.perftest.report_counters;
  CounterSelection sel;
  if (!w_flag.empty()) {
    if (counters_flag != "default") {
      throw harness::UsageError(
          fmt::format("-W {} and --counters {} both select counters: give one", w_flag, counters_flag));
    }
    sel.names = harness::split_counter_list(w_flag);
    if (sel.names.empty()) throw harness::UsageError("-W: no counter named (e.g. -W port_xmit_data,out_of_sequence)");
    return sel;
  }
  if (counters_flag == "none") sel.enabled = false;
  else if (counters_flag == "all") sel.all = true;
  else if (counters_flag != "default") {
    sel.names = harness::split_counter_list(counters_flag);
    if (sel.names.empty()) throw harness::UsageError("--counters: expected default, all, none or a list of names");
  }
  return sel;
}

std::vector<TestSpec> build_specs(const Options& o, Kind kind) {
  const std::vector<Op> ops = parse_ops(o, kind);
  const std::vector<ibv_qp_type> transports = parse_transports(o);
  const std::vector<std::uint64_t> sizes = message_sizes(o, kind);
  const bool single = ops.size() == 1 && transports.size() == 1;
  std::vector<TestSpec> specs;
  for (Op op : ops) {
    for (ibv_qp_type tr : transports) {
      const std::vector<std::uint64_t> op_sizes = is_atomic(op) ? std::vector<std::uint64_t>{kAtomicBytes} : sizes;
      for (std::uint64_t size : op_sizes) {
        TestSpec s = make_spec(o, kind, op, tr, size);
        if (auto bad = validate(s); !bad.empty()) {
          if (single) throw UsageError(bad);
          continue;  // lists: only the combinations that exist (no read over UD)
        }
        specs.push_back(s);
        if (!o.load.empty()) {
          s.load = parse_load_spec(o.load);
          if (auto bad = validate(s); !bad.empty()) throw UsageError(bad);
          specs.push_back(s);
        }
      }
    }
  }
  if (specs.empty()) throw UsageError("no valid combination of --op and -c (read and atomics need RC, write RC or UC)");
  return specs;
}

}  // namespace fabench::pair
