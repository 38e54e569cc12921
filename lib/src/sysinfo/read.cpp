// The RDMA devices and ports of the interconnect record, from /sys/class/infiniband
// (the kernel's ib_core sysfs: ports/N/{link_layer,state,rate,...}, gids/N, gid_attrs/).
#include <cstdlib>
#include <system_error>

#include "files.hpp"

namespace fabench::sysinfo {

namespace detail {

namespace {

// "400 Gb/sec (4X NDR)": the number, the width and the speed name.
void parse_rate(Port& port) {
  const std::string& r = port.rate;
  char* end = nullptr;
  const double gbps = std::strtod(r.c_str(), &end);
  if (end != r.c_str() && r.find("Gb/sec") != std::string::npos) port.rate_gbps = gbps;
  const auto open = r.find('('), close = r.find(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return;
  const std::string inside = r.substr(open + 1, close - open - 1);
  const auto space = inside.find(' ');
  port.width = inside.substr(0, space);
  if (space != std::string::npos) port.speed = inside.substr(space + 1);
}

bool is_zero_gid(const std::string& gid) { return gid.find_first_not_of("0:") == std::string::npos; }

void read_gids(const fs::path& dir, Port& port) {
  for (const auto& name : entries(dir / "gids")) {
    const auto index = std::strtoul(name.c_str(), nullptr, 10);
    const std::string gid = read_line(dir / "gids" / name);
    if (gid.empty() || is_zero_gid(gid)) continue;
    port.gids.push_back(Gid{static_cast<unsigned>(index), gid, read_line(dir / "gid_attrs/types" / name),
                            read_line(dir / "gid_attrs/ndevs" / name)});
  }
}

// The netdev of a RoCE port: the one its GID table names, else the device's only netdev (an
// mlx5 function has one; with several, which is this port's is not said here: none).
std::string port_netdev(const fs::path& device_dir, const Port& port) {
  for (const auto& g : port.gids) {
    if (!g.ndev.empty()) return g.ndev;
  }
  const auto nets = entries(device_dir / "device/net");
  return nets.size() == 1 ? nets.front() : std::string();
}

// Every file below /sys/class/net/<netdev>/ecn (mlx5: roce_np/ and roce_rp/, enable/<prio> and
// the DCQCN parameters), as "roce_np/enable/3" -> "1"; at most kMaxKnobs of them.
void read_congestion(const fs::path& ecn, Port& port) {
  constexpr std::size_t kMaxKnobs = 256;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(ecn, ec), end; !ec && it != end; it.increment(ec)) {
    if (port.congestion.size() >= kMaxKnobs) break;
    if (!it->is_regular_file(ec)) continue;
    const std::string value = read_line(it->path());
    if (!value.empty()) port.congestion[it->path().lexically_relative(ecn).generic_string()] = value;
  }
}

}  // namespace

Port read_port(const fs::path& root, const fs::path& device_dir, unsigned num) {
  const fs::path dir = device_dir / "ports" / std::to_string(num);
  Port p;
  p.num = num;
  p.link_layer = read_line(dir / "link_layer");
  p.state = after_colon(read_line(dir / "state"));
  p.phys_state = after_colon(read_line(dir / "phys_state"));
  p.rate = read_line(dir / "rate");
  parse_rate(p);
  if (p.link_layer == "InfiniBand") {
    p.lid = read_line(dir / "lid");
    p.sm_lid = read_line(dir / "sm_lid");
  }
  read_gids(dir, p);
  if (p.link_layer != "Ethernet") return p;
  p.netdev = port_netdev(device_dir, p);
  if (p.netdev.empty()) return p;
  const fs::path net = root / "sys/class/net" / p.netdev;
  if (const auto mtu = read_number(net / "mtu")) p.netdev_mtu = static_cast<int>(*mtu);
  if (const auto speed = read_number(net / "speed"); speed && *speed > 0) p.netdev_speed_mbps = *speed;
  read_congestion(net / "ecn", p);
  return p;
}

}  // namespace detail

namespace {

RdmaDevice read_device(const detail::fs::path& root, const detail::fs::path& dir, const std::string& name) {
  RdmaDevice d;
  d.name = name;
  d.node_type = detail::after_colon(detail::read_line(dir / "node_type"));
  d.fw_ver = detail::read_line(dir / "fw_ver");
  d.board_id = detail::read_line(dir / "board_id");
  d.node_guid = detail::read_line(dir / "node_guid");
  d.pci = detail::read_pci(root, dir / "device");
  for (const auto& port : detail::entries(dir / "ports")) {
    char* end = nullptr;
    const auto num = std::strtoul(port.c_str(), &end, 10);
    if (end != port.c_str() && *end == '\0')
      d.ports.push_back(detail::read_port(root, dir, static_cast<unsigned>(num)));
  }
  return d;
}

}  // namespace

Record read_record(const std::filesystem::path& root) {
  Record r;
  const auto ib = root / "sys/class/infiniband";
  for (const auto& name : detail::entries(ib)) r.devices.push_back(read_device(root, ib / name, name));
  r.gpus = detail::read_gpus(root);
  r.distances = detail::distances(r.gpus, r.devices);
  r.software = detail::read_software(root);
  return r;
}

}  // namespace fabench::sysinfo
