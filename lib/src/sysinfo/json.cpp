// The interconnect record as JSON and as MLPerf's fields (sysinfo/format.hpp): an empty fact
// is left out, so a reader never mistakes "" or null for a value sysfs gave.
#include <fmt/format.h>

#include <map>
#include <set>

#include "fabench/sysinfo/format.hpp"

namespace fabench::sysinfo {

using Json = nlohmann::ordered_json;

namespace {

void put(Json& j, const char* key, const std::string& v) {
  if (!v.empty()) j[key] = v;
}
template <typename T>
void put(Json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

Json pci_json(const PciLink& p, Form form) {
  Json j;
  put(j, "address", p.address);
  if (form == Form::kFull) put(j, "path", p.path);
  put(j, "current_link_speed", p.current_speed);
  put(j, "current_link_width", p.current_width);
  put(j, "max_link_speed", p.max_speed);
  put(j, "max_link_width", p.max_width);
  put(j, "numa_node", p.numa_node);
  if (form == Form::kFull) put(j, "local_cpulist", p.local_cpus);
  return j;
}

Json port_json(const Port& p, Form form) {
  Json j;
  j["port"] = p.num;
  put(j, "link_layer", p.link_layer);
  put(j, "state", p.state);
  put(j, "phys_state", p.phys_state);
  put(j, "rate", p.rate);
  put(j, "rate_gbps", p.rate_gbps);
  put(j, "width", p.width);
  put(j, "speed", p.speed);
  put(j, "lid", p.lid);
  put(j, "sm_lid", p.sm_lid);
  put(j, "netdev", p.netdev);
  put(j, "netdev_mtu", p.netdev_mtu);
  put(j, "netdev_speed_mbps", p.netdev_speed_mbps);
  if (form == Form::kCompact) return j;
  for (const auto& g : p.gids) {
    Json gj{{"index", g.index}, {"gid", g.gid}};
    put(gj, "type", g.type);
    put(gj, "ndev", g.ndev);
    j["gids"].push_back(std::move(gj));
  }
  for (const auto& [knob, value] : p.congestion) j["congestion"][knob] = value;
  return j;
}

Json device_json(const RdmaDevice& d, Form form) {
  Json j;
  j["name"] = d.name;
  put(j, "node_type", d.node_type);
  put(j, "fw_ver", d.fw_ver);
  put(j, "board_id", d.board_id);
  put(j, "node_guid", d.node_guid);
  if (d.pci) j["pci"] = pci_json(*d.pci, form);
  j["ports"] = Json::array();
  for (const auto& p : d.ports) j["ports"].push_back(port_json(p, form));
  return j;
}

Json software_json(const Software& s) {
  Json j;
  put(j, "kernel", s.kernel);
  put(j, "os", s.os);
  put(j, "rdma_core", s.rdma_core);
  put(j, "rdma_core_build", s.rdma_core_build);
  put(j, "fabench", s.fabench);
  return j;
}

// "2x 400 Gb/sec (4X NDR)" from {"400 Gb/sec (4X NDR)": 2}; one "A, B" per kind.
std::string counted(const std::map<std::string, int>& n) {
  std::string out;
  for (const auto& [what, count] : n) {
    if (!out.empty()) out += ", ";
    out += count > 1 ? fmt::format("{}x {}", count, what) : what;
  }
  return out;
}

}  // namespace

std::string dump(const Json& json, int indent) { return json.dump(indent, ' ', false, Json::error_handler_t::replace); }

std::string pcie_generation(const std::string& speed) {
  static const std::map<std::string, std::string> kGen = {{"2.5", "Gen1"},  {"5.0", "Gen2"},  {"8.0", "Gen3"},
                                                          {"16.0", "Gen4"}, {"32.0", "Gen5"}, {"64.0", "Gen6"}};
  const auto it = kGen.find(speed.substr(0, speed.find(' ')));
  if (it == kGen.end() || speed.find("GT/s") == std::string::npos) return {};
  return "PCIe " + it->second;
}

Json mlperf_fields(const Record& record) {
  std::set<std::string> kinds;
  std::map<std::string, int> rates, links;
  int cards = 0;
  for (const auto& d : record.devices) {
    bool active = false;
    for (const auto& p : d.ports) {
      if (p.state != "ACTIVE") continue;
      active = true;
      if (p.link_layer == "InfiniBand") kinds.insert("InfiniBand");
      if (p.link_layer == "Ethernet") kinds.insert("RoCE");
      if (!p.rate.empty()) ++rates[p.rate];
    }
    cards += active ? 1 : 0;
  }
  for (const auto& g : record.gpus) {
    const std::string gen = pcie_generation(g.pci.max_speed);
    if (!gen.empty() && g.pci.max_width) ++links[fmt::format("{} x{}", gen, *g.pci.max_width)];
  }
  Json j = Json::object();
  std::string networking;
  for (const auto& k : kinds) networking += (networking.empty() ? "" : ", ") + k;
  put(j, "host_networking", networking);
  if (cards > 0) j["host_network_card_count"] = std::to_string(cards);
  put(j, "network_rate", counted(rates));
  put(j, "accelerator_host_interconnect", counted(links));
  return j;
}

Json to_json(const Record& record, Form form) {
  Json j;
  j["devices"] = Json::array();
  for (const auto& d : record.devices) j["devices"].push_back(device_json(d, form));
  j["gpus"] = Json::array();
  for (const auto& g : record.gpus) {
    Json gj{{"vendor_id", g.vendor_id}};
    put(gj, "device_id", g.device_id);
    gj["pci"] = pci_json(g.pci, form);
    j["gpus"].push_back(std::move(gj));
  }
  j["pcie_distances"] = Json::array();
  for (const auto& x : record.distances) {
    Json xj{{"gpu", x.gpu}, {"device", x.device}, {"relation", x.relation}, {"hops", x.hops}};
    if (form == Form::kFull) xj["common_depth"] = x.common_depth;
    if (form == Form::kFull) put(xj, "common", x.common);
    j["pcie_distances"].push_back(std::move(xj));
  }
  if (form == Form::kFull) j["software"] = software_json(record.software);
  j["mlperf"] = mlperf_fields(record);
  return j;
}

}  // namespace fabench::sysinfo
