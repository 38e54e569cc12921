// The command line of the point-to-point benchmarks (fabench-lat,
// fabench-bw): perftest's flags where the feature is the same, parsed into
// Options, checked for contradictions, and expanded into the TestSpecs they
// ask for. No device is needed for any of it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fabench/harness/cli.hpp"
#include "fabench/pair/perftest_flags.hpp"
#include "fabench/pair/spec.hpp"

namespace fabench::pair {

struct Options {
  std::string host;  // "" = serve (or --loopback)
  harness::DeviceFlags dev;
  std::string peer_device;
  std::string sizes;
  bool all = false;
  std::uint64_t iters = 0;
  double duration_s = 0;
  std::uint32_t qps = 1;
  std::uint32_t tx_depth = 0;  // 0: the kind's default
  std::uint32_t rx_depth = 512;
  std::uint32_t post_list = 1;
  std::uint32_t cq_mod = 0;  // 0: the kind's default, shrunk to fit the window
  int inline_bytes = -1;
  bool bidir = false;
  std::string connections = "RC";
  std::string ops = "write";
  bool ops_given = false;  // --op was on the command line (-A and --op contradict each other)
  std::string atomic_type;
  std::uint32_t mtu = 0;
  std::uint16_t port = 18515;
  bool events = false;
  bool cpu_freq = false;
  bool rdma_cm = false;
  unsigned sl = 0;
  unsigned tos = 0;
  std::string bind;
  std::string source_ip;  // client: local address of the control connection (perftest's --source_ip)
  std::string max_mem = "4G";  // server: --max-mem, a size (K, M, G = 2^10, 2^20, 2^30)
  double handshake_s = 3;
  bool loopback = false;
  bool once = false;
  std::optional<std::string> token;  // else --token-file, else FABENCH_TOKEN (ctrl/token.hpp)
  std::optional<std::string> token_file;
  std::string counters = "default";  // --counters: default, all, none or a list of names
  std::string load;                  // fabench-lat --load OP,SIZE[,...] (load.hpp); "" = none
  std::string clock = "auto";        // fabench-lat --clock: auto, tsc or monotonic (harness/clock.hpp)
  PerftestFlags perftest;            // the rest of perftest's flags (perftest_flags.hpp)

  [[nodiscard]] bool serves() const noexcept { return host.empty() && !loopback; }
};

// Which port/hw counters a run reports (--counters, -W; docs/perftest.md).
struct CounterSelection {
  bool enabled = true;             // --counters none: nothing is read
  bool all = false;                // --counters all: every counter that moved
  std::vector<std::string> names;  // -W / --counters LIST; empty (and !all): the default set
  [[nodiscard]] bool keeps(std::string_view name) const;
};
// From --counters (default, all, none or a list of names) and -W (a list);
// both given (-W and a --counters other than default) is a harness::UsageError.
[[nodiscard]] CounterSelection counter_selection(const Options& o);

// The flags of fabench-lat (Kind::kLatency) or fabench-bw (Kind::kBandwidth).
void add_options(CLI::App& app, Options& o, Kind kind);

// Throws harness::UsageError for flags that contradict each other or that
// name no valid value (-m 3000).
void check_contradictions(const Options& o);

// The receive depth of a spec: -r, except perftest's rule for UD and UC send
// latency with -n, where -r at its default 512 becomes min(-n, 16000).
[[nodiscard]] std::uint32_t latency_rx_depth(const Options& o, Kind kind, Op op, ibv_qp_type transport) noexcept;

// One TestSpec per operation x transport x size. In a list, combinations
// that cannot exist (read over UD) are skipped; a single one is an error.
// With --load each is followed by the same spec with the load.
// Throws harness::UsageError, or std::invalid_argument for a bad size.
[[nodiscard]] std::vector<TestSpec> build_specs(const Options& o, Kind kind);

}  // namespace fabench::pair
