// GID table parsing from a fake sysfs tree, and the GID index choice.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "fabench/verbs/device.hpp"
#include "fabench/verbs/error.hpp"
#include "fabench/verbs/gid.hpp"

using namespace fabench::verbs;
namespace fs = std::filesystem;

namespace {

// A temporary directory shaped like /sys/class/infiniband.
class FakeSysfs {
 public:
  FakeSysfs() {
    std::string templ = (fs::temp_directory_path() / "fabench-sysfs-XXXXXX").string();
    if (mkdtemp(templ.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    root_ = templ;
  }
  ~FakeSysfs() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  FakeSysfs(const FakeSysfs&) = delete;
  FakeSysfs& operator=(const FakeSysfs&) = delete;

  [[nodiscard]] std::string root() const { return root_.string(); }

  void write(const fs::path& rel, const std::string& text) const {
    const fs::path p = root_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  // One GID slot; type "" leaves the types file out (as for unused slots,
  // whose types file the kernel refuses to read).
  void gid(const std::string& dev, int port, int index, const std::string& gid, const std::string& type,
           const std::string& ndev = "eth0") const {
    const fs::path base = fs::path(dev) / "ports" / std::to_string(port);
    write(base / "gids" / std::to_string(index), gid + "\n");
    fs::create_directories(root_ / base / "gid_attrs" / "types");
    if (!type.empty()) {
      write(base / "gid_attrs" / "types" / std::to_string(index), type + "\n");
      write(base / "gid_attrs" / "ndevs" / std::to_string(index), ndev + "\n");
    }
  }

 private:
  fs::path root_;
};

constexpr const char* kZero = "0000:0000:0000:0000:0000:0000:0000:0000";
constexpr const char* kLinkLocal = "fe80:0000:0000:0000:b208:75ff:fe5f:b85e";
constexpr const char* kIpv4 = "0000:0000:0000:0000:0000:ffff:0a32:0001";  // 10.50.0.1
constexpr const char* kIpv6 = "fd00:0000:0000:0000:0000:0000:0000:0001";

// What rxe on a netdev with 10.50.0.1 and fd00::1 looks like.
void make_roce(const FakeSysfs& fake) {
  fake.write("rxe0/ports/1/link_layer", "Ethernet\n");
  fake.gid("rxe0", 1, 0, kLinkLocal, "IB/RoCE v1");
  fake.gid("rxe0", 1, 1, kLinkLocal, "RoCE v2");
  fake.gid("rxe0", 1, 2, kIpv6, "IB/RoCE v1");
  fake.gid("rxe0", 1, 3, kIpv6, "RoCE v2");
  fake.gid("rxe0", 1, 4, kIpv4, "IB/RoCE v1");
  fake.gid("rxe0", 1, 5, kIpv4, "RoCE v2");
  fake.gid("rxe0", 1, 6, kZero, "");  // unused slot
  fake.gid("rxe0", 1, 7, kZero, "");
}

}  // namespace

TEST_CASE("parse_gid / format_gid round-trip the sysfs form", "[verbs][gid]") {
  const auto gid = parse_gid(kIpv4);
  REQUIRE(gid.has_value());
  CHECK((*gid)[10] == 0xff);
  CHECK((*gid)[11] == 0xff);
  CHECK((*gid)[12] == 10);
  CHECK((*gid)[13] == 50);
  CHECK((*gid)[15] == 1);
  CHECK(format_gid(*gid) == kIpv4);
  CHECK(format_gid(*parse_gid(kLinkLocal)) == kLinkLocal);
  CHECK_FALSE(parse_gid("fe80::1").has_value());  // compressed form is not sysfs'
  CHECK_FALSE(parse_gid("fe80:0:0:0:0:0:0").has_value());
  CHECK_FALSE(parse_gid("fe80:0:0:0:0:0:0:0:0").has_value());
  CHECK_FALSE(parse_gid("fe80:0:0:0:0:0:0:zz").has_value());
  CHECK_FALSE(parse_gid("fe80:0:0:0:0:0:0:12345").has_value());
  CHECK(is_zero_gid(*parse_gid(kZero)));
}

TEST_CASE("read_gid_table: RoCE port with IPv4 and IPv6 addresses", "[verbs][gid]") {
  FakeSysfs fake;
  make_roce(fake);
  const GidTable t = read_gid_table(fake.root(), "rxe0", 1);
  CHECK(t.device == "rxe0");
  CHECK(t.link_layer == IBV_LINK_LAYER_ETHERNET);
  REQUIRE(t.entries.size() == 6);  // zero slots skipped
  for (std::size_t i = 0; i < t.entries.size(); ++i) CHECK(t.entries[i].index == static_cast<int>(i));
  CHECK(t.entries[0].type == GidType::kRoceV1);
  CHECK(t.entries[1].type == GidType::kRoceV2);
  CHECK_FALSE(t.entries[3].is_ipv4());
  CHECK(t.entries[5].is_ipv4());
  CHECK(t.entries[5].address() == "10.50.0.1");
  CHECK(t.entries[5].ndev == "eth0");
  CHECK(t.find(6) == nullptr);
}

TEST_CASE("choose_gid on Ethernet: RoCE v2 IPv4 first, then RoCE v2, then v1", "[verbs][gid]") {
  FakeSysfs fake;
  make_roce(fake);
  GidTable t = read_gid_table(fake.root(), "rxe0", 1);
  CHECK(choose_gid(t, IBV_LINK_LAYER_ETHERNET).index == 5);

  // Without the IPv4 address: the first RoCE v2 entry.
  std::erase_if(t.entries, [](const GidEntry& e) { return e.is_ipv4(); });
  CHECK(choose_gid(t, IBV_LINK_LAYER_ETHERNET).index == 1);

  // RoCE v1 only.
  std::erase_if(t.entries, [](const GidEntry& e) { return e.type == GidType::kRoceV2; });
  CHECK(choose_gid(t, IBV_LINK_LAYER_ETHERNET).index == 0);

  t.entries.clear();
  CHECK_THROWS_AS(choose_gid(t, IBV_LINK_LAYER_ETHERNET), VerbsError);
}

TEST_CASE("choose_gid --ipv6: RoCE v2 over a global IPv6 address, then a link-local one, else an error",
          "[verbs][gid]") {
  FakeSysfs fake;
  make_roce(fake);
  GidTable t = read_gid_table(fake.root(), "rxe0", 1);
  CHECK(choose_gid(t, IBV_LINK_LAYER_ETHERNET, -1, true).index == 3);    // not 5 (IPv4), not 1 (fe80)
  CHECK(choose_gid(t, IBV_LINK_LAYER_ETHERNET, 4, true).index == 4);     // -x wins
  CHECK(choose_gid(t, IBV_LINK_LAYER_INFINIBAND, -1, true).index == 0);  // IB GIDs: nothing to choose
  CHECK(t.entries[1].is_link_local());
  CHECK_FALSE(t.entries[3].is_link_local());
  CHECK_FALSE(t.entries[5].is_link_local());

  // Only the link-local IPv6 address left: that one.
  std::erase_if(t.entries, [](const GidEntry& e) { return e.index == 3; });
  CHECK(choose_gid(t, IBV_LINK_LAYER_ETHERNET, -1, true).index == 1);

  // IPv4 and RoCE v1 only: no IPv6 RoCE v2 GID, and the error says so.
  std::erase_if(t.entries, [](const GidEntry& e) { return e.index == 1; });
  CHECK_THROWS_WITH(choose_gid(t, IBV_LINK_LAYER_ETHERNET, -1, true),
                    Catch::Contains("--ipv6: no RoCE v2 GID with an IPv6 address on rxe0 port 1"));
}

TEST_CASE("choose_gid: an explicit index is validated and the error lists valid ones", "[verbs][gid]") {
  FakeSysfs fake;
  make_roce(fake);
  const GidTable t = read_gid_table(fake.root(), "rxe0", 1);
  CHECK(choose_gid(t, IBV_LINK_LAYER_ETHERNET, 3).index == 3);
  CHECK(choose_gid(t, IBV_LINK_LAYER_ETHERNET, 0).index == 0);
  try {
    (void)choose_gid(t, IBV_LINK_LAYER_ETHERNET, 7);  // a zero slot
    FAIL("index 7 accepted");
  } catch (const VerbsError& e) {
    const std::string what = e.what();
    CHECK(e.error_number() == EINVAL);
    CHECK_THAT(what, Catch::Contains("GID index 7 is not valid on rxe0 port 1"));
    CHECK_THAT(what, Catch::Contains("5 (RoCE v2 10.50.0.1)"));
    CHECK_THAT(what, Catch::Contains("0 (RoCE v1 fe80:0000:0000:0000:b208:75ff:fe5f:b85e)"));
  }
}

TEST_CASE("read_gid_table: InfiniBand port, choice is index 0", "[verbs][gid]") {
  FakeSysfs fake;
  fake.write("mlx5_0/ports/1/link_layer", "InfiniBand\n");
  fake.gid("mlx5_0", 1, 0, "fe80:0000:0000:0000:0002:c903:00e0:c741", "IB/RoCE v1", "");
  fake.gid("mlx5_0", 1, 1, kZero, "");
  const GidTable t = read_gid_table(fake.root(), "mlx5_0", 1);
  REQUIRE(t.entries.size() == 1);
  CHECK(t.link_layer == IBV_LINK_LAYER_INFINIBAND);
  CHECK(t.entries[0].type == GidType::kIb);
  CHECK(choose_gid(t, IBV_LINK_LAYER_INFINIBAND).index == 0);
}

TEST_CASE("read_gid_table: a missing device or port is a VerbsError", "[verbs][gid]") {
  FakeSysfs fake;
  make_roce(fake);
  CHECK_THROWS_AS(read_gid_table(fake.root(), "rxe9", 1), VerbsError);
  CHECK_THROWS_AS(read_gid_table(fake.root(), "rxe0", 2), VerbsError);
}

TEST_CASE("numa_node_from_sysfs", "[verbs][device]") {
  FakeSysfs fake;
  fake.write("mlx5_0/device/numa_node", "1\n");
  fake.write("mlx5_1/device/numa_node", "-1\n");
  CHECK(numa_node_from_sysfs(fake.root(), "mlx5_0") == 1);
  CHECK(numa_node_from_sysfs(fake.root(), "mlx5_1") == -1);
  CHECK(numa_node_from_sysfs(fake.root(), "rxe0") == -1);  // virtual: no device/ link
}

TEST_CASE("format_guid prints the ibv_devinfo form", "[verbs][device]") {
  CHECK(format_guid(0xb20875fffe5fb85eULL) == "b208:75ff:fe5f:b85e");
  CHECK(format_guid(0x2c90300a595c0ULL) == "0002:c903:00a5:95c0");
}
