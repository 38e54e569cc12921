// The interconnect record of a host (fabench-info, and the "interconnect" key of every binary's
// report context): its RDMA devices and ports, their PCIe links and NUMA nodes, the netdevs of
// RoCE ports, the RoCE congestion knobs sysfs shows, the GPUs and their PCIe distance to each
// RDMA device, and the software stack. Read from sysfs and procfs files only (no verbs calls, no
// commands run), under a root directory that tests point at a fake tree. A fact the files do not
// give is left empty, never guessed (docs/design/packaging.md, "The interconnect record").
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fabench::sysinfo {

// A PCI function's link and locality (/sys/bus/pci/devices/<address>/...).
struct PciLink {
  std::string address;        // "0000:17:00.0"
  std::string path;           // below /sys/devices: "pci0000:16/0000:16:02.0/0000:17:00.0"
  std::string current_speed;  // current_link_speed: "16.0 GT/s PCIe"
  std::optional<int> current_width;
  std::string max_speed;  // max_link_speed
  std::optional<int> max_width;
  std::optional<int> numa_node;  // absent where sysfs says -1 (no NUMA information)
  std::string local_cpus;        // local_cpulist: "0-31,64-95"
};

struct Gid {
  unsigned index = 0;
  std::string gid;   // as sysfs writes it: "fe80:0000:0000:0000:0202:c9ff:fe00:0001"
  std::string type;  // gid_attrs/types: "IB/RoCE v1", "RoCE v2"
  std::string ndev;  // gid_attrs/ndevs: the netdev of a RoCE GID
};

struct Port {
  unsigned num = 0;
  std::string link_layer;  // "InfiniBand" or "Ethernet"
  std::string state;       // "ACTIVE" (sysfs: "4: ACTIVE")
  std::string phys_state;  // "LinkUp" (sysfs: "5: LinkUp")
  std::string rate;        // "400 Gb/sec (4X NDR)"
  std::optional<double> rate_gbps;
  std::string width;        // "4X", from the rate's parentheses
  std::string speed;        // "NDR"
  std::string lid, sm_lid;  // InfiniBand only
  std::vector<Gid> gids;    // non-zero GIDs only
  std::string netdev;       // Ethernet link layer: the GID table's netdev, or the device's only one
  std::optional<int> netdev_mtu;
  std::optional<long> netdev_speed_mbps;
  std::map<std::string, std::string> congestion;  // /sys/class/net/<netdev>/ecn/...: "roce_np/enable/3" -> "1"
};

struct RdmaDevice {
  std::string name;  // "mlx5_0"
  std::string node_type, fw_ver, board_id, node_guid;
  std::optional<PciLink> pci;  // none for software devices (rxe, siw)
  std::vector<Port> ports;
};

struct Gpu {
  std::string vendor_id, device_id;  // "0x10de", "0x2330"
  PciLink pci;
};

// How far a GPU sits from an RDMA device on PCIe: the resolved /sys/devices paths of both and
// the part they share. relation: "pcie-switch" (they meet at a bridge below the root complex),
// "host-bridge" (they meet at the root complex only), "numa-node" or "cross-numa" (different root
// complexes, the same or different NUMA nodes), "cross-root" (different root complexes, NUMA
// unknown). nvidia-smi topo -m calls these PIX/PXB, PHB, NODE and SYS.
struct Distance {
  std::string gpu, device;  // a GPU's PCI address, an RDMA device's name
  std::string common;       // the shared ancestor below /sys/devices ("" when none)
  int common_depth = 0;     // path components shared
  int hops = 0;             // components from each to the shared ancestor, summed
  std::string relation;
};

struct Software {
  std::string kernel;           // /proc/sys/kernel/osrelease
  std::string os;               // /etc/os-release PRETTY_NAME
  std::string rdma_core;        // the installed libibverbs1 package (/var/lib/dpkg/status)
  std::string rdma_core_build;  // the libibverbs fabench was built against (pkg-config)
  std::string fabench;          // fabench's build version
};

struct Record {
  std::vector<RdmaDevice> devices;
  std::vector<Gpu> gpus;
  std::vector<Distance> distances;
  Software software;
};

// The record of the host whose filesystem is mounted at `root` ("/": this host), from
// root/sys, root/proc, root/etc and root/var/lib/dpkg. Devices, ports, GIDs and GPUs in name
// order. Never throws for a missing or unreadable file: that fact stays empty.
[[nodiscard]] Record read_record(const std::filesystem::path& root = "/");

}  // namespace fabench::sysinfo
