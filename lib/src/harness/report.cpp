#include "fabench/harness/report.hpp"

#include <sys/utsname.h>

#include <fmt/format.h>

#include "fabench/base/build_info.hpp"
#include "fabench/sysinfo/format.hpp"

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

std::string kernel_release() {
  utsname u{};
  if (uname(&u) != 0) return "unknown";
  return u.release;
}

namespace {
// The host's interconnect record, the one fabench-info writes (sysinfo/format.hpp), as one line
// of compact JSON.
void add_interconnect_context() {
  const auto record = sysinfo::read_record();
  benchmark::AddCustomContext("interconnect", sysinfo::dump(sysinfo::to_json(record, sysinfo::Form::kCompact)));
}
}  // namespace

void add_host_context(const std::string& mode) {
  auto add = [](const std::string& k, const std::string& v) { benchmark::AddCustomContext(k, v); };
  add("fabench_version", std::string(build_version()));
  add("mode", mode);
  add("host", local_host_name());
  add("kernel", kernel_release());
  add_interconnect_context();
}

void add_fabric_context(const Context& ctx, const std::string& mode) {
  const auto& a = ctx.attributes();
  const auto& p = ctx.port();
  auto add = [](const std::string& k, const std::string& v) { benchmark::AddCustomContext(k, v); };
  add("fabench_version", std::string(build_version()));
  add("mode", mode);
  add("host", local_host_name());
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
  add_interconnect_context();
}

}  // namespace fabench::harness
