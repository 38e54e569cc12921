#include "fabench/pair/report.hpp"

#include <algorithm>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "fabench/harness/counters.hpp"

namespace fabench::pair {

void set_bandwidth_counters(benchmark::State& state, const RunResult& mine, const RunResult& theirs, bool bidir) {
  auto& c = state.counters;
  const double tx_gbps = mine.seconds > 0 ? static_cast<double>(mine.bytes) * 8 / mine.seconds / 1e9 : 0;
  const double rx_gbps = theirs.seconds > 0 ? static_cast<double>(theirs.bytes) * 8 / theirs.seconds / 1e9 : 0;
  const double total_bytes = static_cast<double>(mine.bytes + (bidir ? theirs.bytes : 0));
  const double total_msgs = static_cast<double>(mine.messages + (bidir ? theirs.messages : 0));
  state.SetBytesProcessed(static_cast<std::int64_t>(total_bytes));
  // G = 1e9 bits; rates over the leader's first-post-to-last-completion time
  // (the manual time), computed here so the console shows plain numbers.
  const double seconds = mine.seconds > 0 ? mine.seconds : 1;
  c["Gbps"] = total_bytes * 8 / seconds / 1e9;
  c["Mmsgps"] = total_msgs / seconds / 1e6;
  if (bidir) {
    c["tx_Gbps"] = tx_gbps;
    c["rx_Gbps"] = rx_gbps;
  }
}

void set_load_counters(benchmark::State& state, const LoadResult& mine, const LoadResult& theirs, bool bidir) {
  const auto gbps = [](const LoadResult& r) {
    return r.seconds > 0 ? static_cast<double>(r.bytes) * 8 / r.seconds / 1e9 : 0.0;
  };
  auto& c = state.counters;
  c["load_gbps"] = gbps(mine) + (bidir ? gbps(theirs) : 0.0);
  if (bidir) {
    c["load_tx_gbps"] = gbps(mine);
    c["load_rx_gbps"] = gbps(theirs);
  }
}

void add_pair_context(const PeerInfo& peer) {
  auto add = [](const std::string& k, const std::string& v) { benchmark::AddCustomContext(k, v); };
  add("latency_unit", "us; write/send: one-way = RTT/2, read/atomic: full RTT");
  add("bandwidth_unit", "Gbps = 1e9 bit/s of payload; bytes_per_second in 2^10 multiples on the console");
  add("peer_host", peer.host);
  add("peer_device", peer.device);
  add("peer_fw_ver", peer.fw_ver);
  add("peer_port_rate_Gbps", fmt::format("{:g}", peer.port_rate_gbps));
  add("peer_link_layer", peer.link_layer);
  add("peer_active_mtu", std::to_string(peer.active_mtu_bytes));
  add("peer_fabench_version", peer.version);
}

void set_counter_deltas(benchmark::State& state, const CounterReport& mine, const CounterReport& theirs,
                        const CounterSelection& selection) {
  if (!selection.enabled) return;
  int moved = 0;
  auto add = [&](std::string_view prefix, const CounterReport& r) {
    for (const auto& [name, delta] : r.deltas) {
      if (!selection.keeps(name)) continue;
      state.counters[std::string(prefix) + name] = static_cast<double>(delta);
      if (harness::counter_kind(name) == harness::CounterKind::kError ||
          harness::counter_kind(name) == harness::CounterKind::kCongestion) {
        ++moved;
      }
    }
  };
  add(kCounterPrefix, mine);
  add(kPeerCounterPrefix, theirs);
  if (mine.available > 0 || theirs.available > 0) state.counters[std::string(kCounterSummary)] = moved;
}

void add_counter_context(const harness::Context& ctx, const CounterSelection& selection) {
  std::string set = "default set (bytes, packets, errors, congestion)";
  if (selection.all) set = "all";
  if (!selection.names.empty()) set = fmt::format("{}", fmt::join(selection.names, ","));
  benchmark::AddCustomContext("counters",
                              fmt::format("{}; ctr:NAME, peer_ctr:NAME = change of counter NAME on this end, the "
                                          "server's, over a run (kernel units: port_*_data in 4-byte words); "
                                          "ctr_err = error/congestion counters that moved",
                                          set));
  if (selection.names.empty()) return;
  const auto local = harness::read_port_counters(ctx.device().name(), ctx.port().port_num);
  for (const auto& want : selection.names) {
    const bool found = std::any_of(local.begin(), local.end(),
                                   [&want](const auto& kv) { return harness::counter_selected(kv.first, {want}); });
    if (!found) {
      spdlog::warn("counter '{}': {} port {} has no such counter under {} (it reports 0 here unless the peer has it)",
                   want, ctx.device().name(), ctx.port().port_num, harness::kSysfsInfiniband);
    }
  }
}

namespace {

// Passes every call on to Google Benchmark's display reporter; a console one
// gets the runs without the per-counter deltas (they go to JSON, CSV and
// --benchmark_out). Google Benchmark owns its display reporter (a static
// object, CreateDefaultDisplayReporter), so this holds it without owning it.
class DisplayReporter : public benchmark::BenchmarkReporter {
 public:
  explicit DisplayReporter(benchmark::BenchmarkReporter* inner)
      : inner_(inner), compact_(dynamic_cast<benchmark::ConsoleReporter*>(inner) != nullptr) {}
  bool ReportContext(const Context& context) override { return inner_->ReportContext(context); }
  void ReportRuns(const std::vector<Run>& reports) override {
    if (!compact_) return inner_->ReportRuns(reports);
    std::vector<Run> runs = reports;
    for (auto& r : runs) {
      std::erase_if(r.counters, [](const auto& kv) {
        return kv.first.starts_with(kCounterPrefix) || kv.first.starts_with(kPeerCounterPrefix);
      });
    }
    inner_->ReportRuns(runs);
  }
  void Finalize() override { inner_->Finalize(); }

 private:
  benchmark::BenchmarkReporter* inner_;
  bool compact_;
};

}  // namespace

std::unique_ptr<benchmark::BenchmarkReporter> make_display_reporter() {
  return std::make_unique<DisplayReporter>(benchmark::CreateDefaultDisplayReporter());
}

}  // namespace fabench::pair
