#include "fabench/harness/report.hpp"

#include <sys/utsname.h>

#include <fmt/format.h>

#include "fabench/ctrl/channel.hpp"
#include "fabench/ctrl/wire.hpp"

#ifndef FABENCH_RDMA_CORE_VERSION
#define FABENCH_RDMA_CORE_VERSION "unknown"
#endif

namespace fabench::harness {

benchmark::internal::Benchmark* register_fabric_benchmark(const std::string& name,
                                                          std::function<void(benchmark::State&)> fn,
                                                          const Registration& reg) {
  auto* b = benchmark::RegisterBenchmark(name.c_str(), std::move(fn));
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
  if (reg.iterations > 0) b->Iterations(static_cast<benchmark::IterationCount>(reg.iterations));
  if (reg.min_time_s > 0) b->MinTime(reg.min_time_s);
  return b;
}

void set_latency_counters(benchmark::State& state, const Stats& s, bool half) {
  const double k = (half ? 0.5 : 1.0) / 1e3;  // ns round trip -> us
  auto& c = state.counters;
  c["min_us"] = s.min * k;
  c["mean_us"] = s.mean * k;
  c["p50_us"] = s.p50 * k;
  c["p90_us"] = s.p90 * k;
  c["p99_us"] = s.p99 * k;
  c["p99.9_us"] = s.p999 * k;
  c["p99.99_us"] = s.p9999 * k;
  c["max_us"] = s.max * k;
  c["stddev_us"] = s.stddev * k;
  c["samples"] = static_cast<double>(s.count);
  state.SetLabel(half ? "one-way = RTT/2" : "RTT");
}

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

std::string kernel_release() {
  utsname u{};
  if (uname(&u) != 0) return "unknown";
  return u.release;
}

void add_fabric_context(const Context& ctx, const PeerInfo* peer, const std::string& mode) {
  const auto& a = ctx.attributes();
  const auto& p = ctx.port();
  auto add = [](const std::string& k, const std::string& v) { benchmark::AddCustomContext(k, v); };
  add("fabench_version", std::string(ctrl::build_version()));
  add("mode", mode);
  add("host", ctrl::local_host_name());
  add("device", a.name);
  add("fw_ver", a.fw_ver);
  add("node_guid", a.node_guid_text);
  add("port", std::to_string(p.port_num));
  add("link_layer", p.link_layer_name);
  add("active_speed", p.speed_name);
  add("active_width", p.width_name);
  add("port_rate_Gbps", fmt::format("{:g}", p.rate_gbps));
  add("active_mtu", std::to_string(p.active_mtu_bytes));
  add("gid_index", std::to_string(ctx.gid_index()));
  add("gid_type", ctx.gid_type());
  add("gid", ctx.gid_text());
  add("numa_node", std::to_string(ctx.device().numa_node()));
  add("kernel", kernel_release());
  add("rdma_core", FABENCH_RDMA_CORE_VERSION);
  add("latency_unit", "us; write/send: one-way = RTT/2, read/atomic: full RTT");
  add("bandwidth_unit", "Gbps = 1e9 bit/s of payload; bytes_per_second in 2^10 multiples on the console");
  if (peer != nullptr) {
    add("peer_host", peer->host);
    add("peer_device", peer->device);
    add("peer_fw_ver", peer->fw_ver);
    add("peer_port_rate_Gbps", fmt::format("{:g}", peer->port_rate_gbps));
    add("peer_link_layer", peer->link_layer);
    add("peer_active_mtu", std::to_string(peer->active_mtu_bytes));
    add("peer_fabench_version", peer->version);
  }
}

}  // namespace fabench::harness
