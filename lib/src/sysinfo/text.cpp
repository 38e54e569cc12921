// The interconnect record as text (fabench-info without --json): what the JSON has, one fact
// group a line, empty facts left out.
#include <fmt/format.h>

#include "fabench/sysinfo/format.hpp"

namespace fabench::sysinfo {

namespace {

// "key value" pieces joined by two spaces, the empty ones left out.
std::string joined(std::initializer_list<std::pair<const char*, std::string>> parts) {
  std::string out;
  for (const auto& [key, value] : parts) {
    if (value.empty()) continue;
    if (!out.empty()) out += "  ";
    out += *key != '\0' ? fmt::format("{} {}", key, value) : value;
  }
  return out;
}

std::string link_text(const std::string& speed, const std::optional<int>& width) {
  if (speed.empty() && !width) return {};
  return width ? fmt::format("{} x{}", speed, *width) : speed;
}

std::string pci_text(const PciLink& p) {
  return joined({{"PCIe", p.address},
                 {"link", link_text(p.current_speed, p.current_width)},
                 {"max", link_text(p.max_speed, p.max_width)},
                 {"NUMA", p.numa_node ? std::to_string(*p.numa_node) : std::string()},
                 {"CPUs", p.local_cpus}});
}

void port_text(std::string& out, const Port& p) {
  out += "  " +
         joined({{"port", std::to_string(p.num)},
                 {"", p.link_layer},
                 {"", p.state + (p.phys_state.empty() ? "" : " (" + p.phys_state + ")")},
                 {"", p.rate},
                 {"LID", p.lid},
                 {"SM LID", p.sm_lid}}) +
         "\n";
  if (!p.netdev.empty()) {
    out += "    " +
           joined({{"netdev", p.netdev},
                   {"MTU", p.netdev_mtu ? std::to_string(*p.netdev_mtu) : std::string()},
                   {"speed", p.netdev_speed_mbps ? fmt::format("{} Mb/s", *p.netdev_speed_mbps) : ""}}) +
           "\n";
  }
  for (const auto& g : p.gids)
    out += "    " + joined({{"GID", std::to_string(g.index)}, {"", g.gid}, {"", g.type}, {"", g.ndev}}) + "\n";
  for (const auto& [knob, value] : p.congestion) out += fmt::format("    ecn {} = {}\n", knob, value);
}

}  // namespace

std::string to_text(const Record& r) {
  std::string out;
  if (r.devices.empty()) out += "no RDMA device (/sys/class/infiniband is empty or absent)\n";
  for (const auto& d : r.devices) {
    out += joined(
               {{"", d.name}, {"", d.node_type}, {"fw", d.fw_ver}, {"board", d.board_id}, {"node GUID", d.node_guid}}) +
           "\n";
    if (d.pci) out += "  " + pci_text(*d.pci) + "\n";
    for (const auto& p : d.ports) port_text(out, p);
  }
  for (const auto& g : r.gpus) {
    out += fmt::format("GPU {}:{}  {}\n", g.vendor_id, g.device_id, pci_text(g.pci));
    for (const auto& x : r.distances) {
      if (x.gpu == g.pci.address) out += fmt::format("  to {}: {}, {} hops\n", x.device, x.relation, x.hops);
    }
  }
  const auto& s = r.software;
  out += "software: " +
         joined({{"kernel", s.kernel},
                 {"os", s.os},
                 {"rdma-core", s.rdma_core},
                 {"built with rdma-core", s.rdma_core_build},
                 {"fabench", s.fabench}}) +
         "\n";
  const auto mlperf = mlperf_fields(r);  // kept: items() refers to it
  for (const auto& [field, value] : mlperf.items())
    out += fmt::format("mlperf {}: {}\n", field, value.get<std::string>());
  return out;
}

}  // namespace fabench::sysinfo
