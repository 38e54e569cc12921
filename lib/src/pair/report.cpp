#include "fabench/pair/report.hpp"

#include <string>

#include <fmt/format.h>

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

}  // namespace fabench::pair
