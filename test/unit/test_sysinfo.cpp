// lib/sysinfo, the interconnect record, against a fake sysfs tree in a temporary directory laid
// out as the kernel lays out its own: an InfiniBand mlx5 behind a PCIe switch with a GPU beside
// it, a RoCE mlx5 on another root complex and NUMA node with its netdev and ECN knobs, a Soft-RoCE
// device with no PCI parent, a second GPU on the first root complex, and an NVIDIA function that
// is not a GPU. Every fact the tree leaves out must be left out of the record.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "fabench/base/build_info.hpp"
#include "fabench/sysinfo/format.hpp"
#include "fabench/sysinfo/record.hpp"
#include "temp_dir.hpp"

// In fabench::sysinfo, so that its names win over those other test files of the same unity
// source bring in with using-directives.
namespace fabench::sysinfo {

namespace {

namespace fs = std::filesystem;

constexpr const char* kSwitch = "pci0000:16/0000:16:02.0/0000:17:00.0";
const std::string kIbPci = std::string(kSwitch) + "/0000:18:00.0/0000:19:00.0";
const std::string kGpu0 = std::string(kSwitch) + "/0000:18:01.0/0000:1a:00.0";
const std::string kGpu1 = "pci0000:16/0000:16:03.0/0000:15:00.0";
const std::string kRocePci = "pci0000:80/0000:80:01.0/0000:81:00.0";
const std::string kAudio = std::string(kSwitch) + "/0000:18:01.0/0000:1a:00.1";

class FakeHost {
 public:
  FakeHost() : root_(dir_.write("marker", "").parent_path()) {
    ib_device("mlx5_0", kIbPci);
    pci(kIbPci, "0x15b3", "0x020700", "0");
    ib_port("mlx5_0", "InfiniBand", "400 Gb/sec (4X NDR)");
    file("sys/class/infiniband/mlx5_0/ports/1/lid", "0x5");
    file("sys/class/infiniband/mlx5_0/ports/1/sm_lid", "0x1");
    gid("mlx5_0", 0, "fe80:0000:0000:0000:a088:c203:0000:1234", "IB/RoCE v1", "");
    gid("mlx5_0", 1, "0000:0000:0000:0000:0000:0000:0000:0000", "", "");

    ib_device("mlx5_1", kRocePci);
    pci(kRocePci, "0x15b3", "0x020000", "1");
    ib_port("mlx5_1", "Ethernet", "200 Gb/sec (4X HDR)");
    gid("mlx5_1", 0, "fe80:0000:0000:0000:0e42:a1ff:fe00:0001", "IB/RoCE v1", "ens1f0");
    gid("mlx5_1", 2, "0000:0000:0000:0000:0000:ffff:0a32:0001", "RoCE v2", "ens1f0");
    gid("mlx5_1", 10, "0000:0000:0000:0000:0000:ffff:0a32:0002", "RoCE v2", "ens1f0");
    file("sys/class/net/ens1f0/mtu", "9000");
    file("sys/class/net/ens1f0/speed", "200000");
    file("sys/class/net/ens1f0/ecn/roce_np/enable/3", "1");
    file("sys/class/net/ens1f0/ecn/roce_rp/enable/3", "0");

    // Soft-RoCE: a virtual device (no "device" link), the GID table names the netdev.
    file("sys/devices/virtual/infiniband/rxe0/node_type", "1: CA");
    link("sys/class/infiniband/rxe0", "../../devices/virtual/infiniband/rxe0");
    ib_port("rxe0", "Ethernet", "100 Gb/sec (4X EDR)");
    gid("rxe0", 1, "0000:0000:0000:0000:0000:ffff:0a32:0101", "RoCE v2", "veth0");
    file("sys/class/net/veth0/mtu", "1500");
    file("sys/class/net/veth0/speed", "-1");

    pci(kGpu0, "0x10de", "0x030200", "0", "32.0 GT/s PCIe");
    pci(kGpu1, "0x10de", "0x030200", "-1", "32.0 GT/s PCIe");
    pci(kAudio, "0x10de", "0x040300", "0");

    file("proc/sys/kernel/osrelease", "6.1.0-26-amd64");
    file("etc/os-release", "NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n");
    file("var/lib/dpkg/status",
         "Package: libibverbs-dev\nStatus: install ok installed\nVersion: 44.0-2\n\n"
         "Package: libibverbs1\nStatus: install ok installed\nArchitecture: amd64\nVersion: 44.0-2\n\n"
         "Package: rdma-core\nStatus: deinstall ok config-files\nVersion: 43.0-1\n");
  }

  [[nodiscard]] const fs::path& root() const { return root_; }

  void file(const std::string& rel, const std::string& text) const { static_cast<void>(dir_.write(rel, text + "\n")); }
  void link(const std::string& rel, const std::string& target) const {
    fs::create_directories((root_ / rel).parent_path());
    fs::create_directory_symlink(target, root_ / rel);
  }

 private:
  // An RDMA device below PCI function `pci_path` and its /sys/class/infiniband link.
  void ib_device(const std::string& name, const std::string& pci_path) const {
    const std::string dir = "sys/devices/" + pci_path + "/infiniband/" + name;
    file(dir + "/node_type", "1: CA");
    file(dir + "/fw_ver", "28.39.1002");
    file(dir + "/board_id", "MT_0000000838");
    file(dir + "/node_guid", "a088:c203:0000:1234");
    link(dir + "/device", "../../../" + fs::path(pci_path).filename().string());
    link("sys/class/infiniband/" + name, "../../devices/" + pci_path + "/infiniband/" + name);
  }
  void ib_port(const std::string& dev, const std::string& layer, const std::string& rate) const {
    const std::string p = "sys/class/infiniband/" + dev + "/ports/1/";
    file(p + "link_layer", layer);
    file(p + "state", "4: ACTIVE");
    file(p + "phys_state", "5: LinkUp");
    file(p + "rate", rate);
  }
  void gid(const std::string& dev, int index, const std::string& gid, const std::string& type,
           const std::string& ndev) const {
    const std::string p = "sys/class/infiniband/" + dev + "/ports/1/";
    file(p + "gids/" + std::to_string(index), gid);
    if (!type.empty()) file(p + "gid_attrs/types/" + std::to_string(index), type);
    if (!ndev.empty()) file(p + "gid_attrs/ndevs/" + std::to_string(index), ndev);
  }
  void pci(const std::string& path, const std::string& vendor, const std::string& cls, const std::string& numa,
           const std::string& max_speed = "16.0 GT/s PCIe") const {
    const std::string dir = "sys/devices/" + path + "/";
    file(dir + "vendor", vendor);
    file(dir + "device", vendor == "0x10de" ? "0x2330" : "0x1021");
    file(dir + "class", cls);
    file(dir + "current_link_speed", vendor == "0x10de" ? "2.5 GT/s PCIe" : "16.0 GT/s PCIe");
    file(dir + "current_link_width", "16");
    file(dir + "max_link_speed", max_speed);
    file(dir + "max_link_width", "16");
    file(dir + "numa_node", numa);
    file(dir + "local_cpulist", numa == "1" ? "32-63" : "0-31");
    link("sys/bus/pci/devices/" + fs::path(path).filename().string(), "../../../devices/" + path);
  }

  fabench::test::TempDir dir_;
  fs::path root_;
};

const RdmaDevice& device(const Record& r, const std::string& name) {
  for (const auto& d : r.devices) {
    if (d.name == name) return d;
  }
  FAIL("no device " << name);
  throw;
}

}  // namespace

TEST_CASE("sysinfo: devices, InfiniBand port facts and PCIe link", "[sysinfo]") {
  const FakeHost host;
  const Record r = read_record(host.root());
  REQUIRE(r.devices.size() == 3);
  CHECK(r.devices[0].name == "mlx5_0");
  CHECK(r.devices[1].name == "mlx5_1");
  CHECK(r.devices[2].name == "rxe0");
  const auto& ib = device(r, "mlx5_0");
  CHECK(ib.node_type == "CA");
  CHECK(ib.fw_ver == "28.39.1002");
  CHECK(ib.board_id == "MT_0000000838");
  REQUIRE(ib.pci);
  CHECK(ib.pci->address == "0000:19:00.0");
  CHECK(ib.pci->path == kIbPci);
  CHECK(ib.pci->current_speed == "16.0 GT/s PCIe");
  CHECK(ib.pci->current_width == 16);
  CHECK(ib.pci->numa_node == 0);
  CHECK(ib.pci->local_cpus == "0-31");
  REQUIRE(ib.ports.size() == 1);
  const Port& p = ib.ports[0];
  CHECK(p.link_layer == "InfiniBand");
  CHECK(p.state == "ACTIVE");
  CHECK(p.phys_state == "LinkUp");
  CHECK(p.rate_gbps == 400.0);
  CHECK(p.width == "4X");
  CHECK(p.speed == "NDR");
  CHECK(p.lid == "0x5");
  CHECK(p.sm_lid == "0x1");
  CHECK(p.netdev.empty());      // an InfiniBand port has no RoCE netdev
  REQUIRE(p.gids.size() == 1);  // the zero GID is left out
  CHECK(p.gids[0].type == "IB/RoCE v1");
}

TEST_CASE("sysinfo: a RoCE port's GIDs, netdev, MTU and ECN knobs", "[sysinfo]") {
  const FakeHost host;
  const Record r = read_record(host.root());
  const Port& p = device(r, "mlx5_1").ports.at(0);
  CHECK(p.link_layer == "Ethernet");
  CHECK(p.lid.empty());  // LIDs are InfiniBand's
  REQUIRE(p.gids.size() == 3);
  CHECK(p.gids[1].index == 2);  // natural order: 2 before 10
  CHECK(p.gids[2].index == 10);
  CHECK(p.gids[2].type == "RoCE v2");
  CHECK(p.netdev == "ens1f0");
  CHECK(p.netdev_mtu == 9000);
  CHECK(p.netdev_speed_mbps == 200000);
  CHECK(p.congestion.size() == 2);
  CHECK(p.congestion.at("roce_np/enable/3") == "1");
  CHECK(p.congestion.at("roce_rp/enable/3") == "0");
  CHECK(device(r, "mlx5_1").pci->numa_node == 1);

  const RdmaDevice& rxe = device(r, "rxe0");
  CHECK_FALSE(rxe.pci);  // no PCI parent: nothing invented
  CHECK(rxe.fw_ver.empty());
  const Port& rp = rxe.ports.at(0);
  CHECK(rp.netdev == "veth0");
  CHECK(rp.netdev_mtu == 1500);
  CHECK_FALSE(rp.netdev_speed_mbps);  // -1: unknown
  CHECK(rp.congestion.empty());
}

TEST_CASE("sysinfo: GPUs and their PCIe distance to each device", "[sysinfo]") {
  const FakeHost host;
  const Record r = read_record(host.root());
  REQUIRE(r.gpus.size() == 2);                     // the NVIDIA audio function is not a GPU
  CHECK(r.gpus[0].pci.address == "0000:15:00.0");  // PCI addresses in hex order: 15 before 1a
  CHECK_FALSE(r.gpus[0].pci.numa_node);            // numa_node -1
  CHECK(r.gpus[1].pci.address == "0000:1a:00.0");
  CHECK(r.gpus[1].device_id == "0x2330");
  REQUIRE(r.distances.size() == 4);  // 2 GPUs x the 2 devices on PCI (rxe0 has none)
  const auto find = [&](const std::string& gpu, const std::string& dev) {
    for (const auto& d : r.distances) {
      if (d.gpu == gpu && d.device == dev) return d;
    }
    FAIL("no distance " << gpu << " " << dev);
    throw;
  };
  const auto same_switch = find("0000:1a:00.0", "mlx5_0");
  CHECK(same_switch.relation == "pcie-switch");
  CHECK(same_switch.common == "0000:17:00.0");
  CHECK(same_switch.common_depth == 3);
  CHECK(same_switch.hops == 4);
  const auto bridge = find("0000:15:00.0", "mlx5_0");
  CHECK(bridge.relation == "host-bridge");
  CHECK(bridge.common == "pci0000:16");
  CHECK(bridge.hops == 6);
  CHECK(find("0000:1a:00.0", "mlx5_1").relation == "cross-numa");
  CHECK(find("0000:1a:00.0", "mlx5_1").hops == 8);
  CHECK(find("0000:15:00.0", "mlx5_1").relation == "cross-root");  // the GPU's NUMA node is unknown
}

TEST_CASE("sysinfo: the software stack", "[sysinfo]") {
  const FakeHost host;
  const Software s = read_record(host.root()).software;
  CHECK(s.kernel == "6.1.0-26-amd64");
  CHECK(s.os == "Debian GNU/Linux 12 (bookworm)");
  CHECK(s.rdma_core == "44.0-2");  // libibverbs1's stanza, not libibverbs-dev's or rdma-core's
  CHECK(s.fabench == fabench::build_version());
}

TEST_CASE("sysinfo: JSON leaves out what is missing; the compact form and MLPerf's fields", "[sysinfo]") {
  const FakeHost host;
  const Record r = read_record(host.root());
  const auto full = to_json(r);
  CHECK(full["devices"][2]["name"] == "rxe0");
  CHECK_FALSE(full["devices"][2].contains("pci"));
  CHECK_FALSE(full["devices"][2].contains("fw_ver"));
  CHECK_FALSE(full["devices"][2]["ports"][0].contains("netdev_speed_mbps"));
  CHECK(full["devices"][1]["ports"][0]["gids"].size() == 3);
  CHECK(full["devices"][1]["ports"][0]["congestion"]["roce_np/enable/3"] == "1");
  CHECK_FALSE(full["gpus"][0]["pci"].contains("numa_node"));
  CHECK(full["software"]["rdma_core"] == "44.0-2");
  CHECK(full["pcie_distances"].size() == 4);

  const auto compact = to_json(r, Form::kCompact);
  CHECK_FALSE(compact["devices"][1]["ports"][0].contains("gids"));
  CHECK_FALSE(compact["devices"][1]["ports"][0].contains("congestion"));
  CHECK_FALSE(compact.contains("software"));
  CHECK(compact["devices"][1]["ports"][0]["netdev_mtu"] == 9000);
  CHECK(dump(compact).find('\n') == std::string::npos);

  const auto m = mlperf_fields(r);
  CHECK(m["host_networking"] == "InfiniBand, RoCE");
  CHECK(m["host_network_card_count"] == "3");
  CHECK(m["network_rate"] == "100 Gb/sec (4X EDR), 200 Gb/sec (4X HDR), 400 Gb/sec (4X NDR)");
  CHECK(m["accelerator_host_interconnect"] == "2x PCIe Gen5 x16");
  CHECK(full["mlperf"] == m);
}

TEST_CASE("sysinfo: an empty root gives an empty record, and text says so", "[sysinfo]") {
  const fabench::test::TempDir empty;
  const fs::path root = empty.write("x", "").parent_path();
  const Record r = read_record(root);
  CHECK(r.devices.empty());
  CHECK(r.gpus.empty());
  CHECK(r.software.kernel.empty());
  CHECK(r.software.rdma_core.empty());
  CHECK(mlperf_fields(r).empty());
  CHECK(to_text(r).find("no RDMA device") != std::string::npos);
  const auto j = to_json(r);
  CHECK_FALSE(j["software"].contains("kernel"));
  CHECK_FALSE(j["mlperf"].contains("host_network_card_count"));
}

TEST_CASE("sysinfo: text names each device, port, GPU distance and MLPerf field", "[sysinfo]") {
  const FakeHost host;
  const std::string text = to_text(read_record(host.root()));
  CHECK(text.find("mlx5_0  CA  fw 28.39.1002") != std::string::npos);
  CHECK(text.find("port 1  InfiniBand  ACTIVE (LinkUp)  400 Gb/sec (4X NDR)  LID 0x5  SM LID 0x1") !=
        std::string::npos);
  CHECK(text.find("netdev ens1f0  MTU 9000  speed 200000 Mb/s") != std::string::npos);
  CHECK(text.find("ecn roce_np/enable/3 = 1") != std::string::npos);
  CHECK(text.find("to mlx5_0: pcie-switch, 4 hops") != std::string::npos);
  CHECK(text.find("mlperf host_network_card_count: 3") != std::string::npos);
}

TEST_CASE("sysinfo: PCIe generation of a link speed", "[sysinfo]") {
  CHECK(pcie_generation("16.0 GT/s PCIe") == "PCIe Gen4");
  CHECK(pcie_generation("32.0 GT/s PCIe") == "PCIe Gen5");
  CHECK(pcie_generation("2.5 GT/s PCIe") == "PCIe Gen1");
  CHECK(pcie_generation("Unknown") == "");
  CHECK(pcie_generation("") == "");
}

}  // namespace fabench::sysinfo
