// The GPUs of the interconnect record and their PCIe distance to each RDMA device, and the
// software stack: what sysfs, procfs, /etc/os-release and dpkg's status file say.
#include <algorithm>
#include <fstream>

#include "fabench/base/build_info.hpp"
#include "files.hpp"

#ifndef FABENCH_RDMA_CORE_VERSION
#define FABENCH_RDMA_CORE_VERSION ""
#endif

namespace fabench::sysinfo::detail {

namespace {

// NVIDIA's PCI vendor id; classes 0x0302 (3D controller: data-centre GPUs) and 0x0300 (VGA).
constexpr std::string_view kNvidia = "0x10de";

std::vector<std::string> path_parts(const std::string& path) {
  std::vector<std::string> out;
  for (const auto& part : fs::path(path)) out.push_back(part.string());
  return out;
}

std::string relation_of(const PciLink& a, const PciLink& b, std::size_t common) {
  if (common >= 2) return "pcie-switch";
  if (common == 1) return "host-bridge";
  if (!a.numa_node || !b.numa_node) return "cross-root";
  return *a.numa_node == *b.numa_node ? "numa-node" : "cross-numa";
}

// The Version of package `name` in a dpkg status file, if it is installed.
std::string dpkg_version(const fs::path& status, std::string_view name) {
  std::ifstream in(status);
  std::string line, version;
  bool mine = false, installed = false;
  const std::string header = "Package: " + std::string(name);
  while (std::getline(in, line)) {
    if (line.empty()) {
      if (mine) break;
      continue;
    }
    if (line.starts_with("Package: ")) mine = line == header;
    if (!mine) continue;
    if (line.starts_with("Version: ")) version = line.substr(9);
    if (line.starts_with("Status: ")) installed = line.ends_with(" installed");
  }
  return mine && installed ? version : std::string();
}

std::string os_pretty_name(const fs::path& os_release) {
  std::ifstream in(os_release);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with("PRETTY_NAME=")) continue;
    std::string v = line.substr(12);
    if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front())
      v = v.substr(1, v.size() - 2);
    return v;
  }
  return {};
}

}  // namespace

std::vector<Gpu> read_gpus(const fs::path& root) {
  std::vector<Gpu> out;
  const fs::path pci = root / "sys/bus/pci/devices";
  auto addresses = entries(pci);
  std::sort(addresses.begin(), addresses.end());  // fixed-width hex: text order is address order
  for (const auto& address : addresses) {
    const fs::path dir = pci / address;
    const std::string cls = read_line(dir / "class");
    if (read_line(dir / "vendor") != kNvidia || !(cls.starts_with("0x0302") || cls.starts_with("0x0300"))) continue;
    auto link = read_pci(root, dir);
    if (!link) continue;
    out.push_back(Gpu{std::string(kNvidia), read_line(dir / "device"), std::move(*link)});
  }
  return out;
}

std::vector<Distance> distances(const std::vector<Gpu>& gpus, const std::vector<RdmaDevice>& devices) {
  std::vector<Distance> out;
  for (const auto& g : gpus) {
    const auto gp = path_parts(g.pci.path);
    for (const auto& d : devices) {
      if (!d.pci) continue;
      const auto dp = path_parts(d.pci->path);
      const auto [gi, di] = std::mismatch(gp.begin(), gp.end(), dp.begin(), dp.end());
      const auto common = static_cast<std::size_t>(gi - gp.begin());
      Distance x;
      x.gpu = g.pci.address;
      x.device = d.name;
      x.common = common == 0 ? std::string() : gp[common - 1];
      x.common_depth = static_cast<int>(common);
      x.hops = static_cast<int>((gp.size() - common) + (dp.size() - common));
      x.relation = relation_of(g.pci, *d.pci, common);
      out.push_back(std::move(x));
    }
  }
  return out;
}

Software read_software(const fs::path& root) {
  Software s;
  s.kernel = read_line(root / "proc/sys/kernel/osrelease");
  s.os = os_pretty_name(root / "etc/os-release");
  s.rdma_core = dpkg_version(root / "var/lib/dpkg/status", "libibverbs1");
  s.rdma_core_build = FABENCH_RDMA_CORE_VERSION;
  s.fabench = std::string(build_version());
  return s;
}

}  // namespace fabench::sysinfo::detail
