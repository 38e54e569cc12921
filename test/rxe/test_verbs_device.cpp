// Device, port, GID, CQ event mode, inline data, error paths and move
// semantics against the test bed's real rxe devices.
#include <chrono>
#include <string>
#include <utility>

#include "verbs_testbed.hpp"

using namespace fabench::verbs;
using namespace fabench::verbs::testbed;
using Catch::Contains;

TEST_CASE("Device::open by name, and the attributes a report needs", "[rxe][verbs][device]") {
  Device dev = Device::open(dev0());
  CHECK(dev.name() == dev0());
  const DeviceAttributes a = dev.attributes();
  CHECK(a.name == dev0());
  CHECK(a.max_qp_wr > 0);
  CHECK(a.max_sge > 0);
  CHECK(a.max_cqe > 0);
  CHECK(a.max_mr_size > 0);
  CHECK(a.phys_port_cnt >= 1);
  CHECK(a.max_msg_sz > 0);
  CHECK(a.node_guid_text.size() == 19);
  CHECK(a.atomic_cap != IBV_ATOMIC_NONE);  // rxe does atomics
  CHECK(a.max_inline_data > 0);
  const int numa = dev.numa_node();
  CHECK(numa >= -1);

  const Port p = dev.port(1);
  CHECK(p.is_active());
  CHECK(p.state_name == "ACTIVE");
  CHECK(p.is_ethernet());
  CHECK(p.link_layer_name == "Ethernet");
  CHECK(p.active_mtu_bytes >= 256);
  CHECK(p.active_mtu_bytes == mtu_bytes(p.active_mtu));
  // Whatever rxe derives from its netdev, it is a known encoding.
  CHECK(p.rate_gbps > 0);
  INFO(p.width_name << " " << p.speed_name << " = " << p.rate_gbps << " Gb/s");
  CHECK(dev.first_active_port() == std::optional<std::uint8_t>{1});
}

TEST_CASE("Device::open(\"\") picks a device with an active port", "[rxe][verbs][device]") {
  Device dev = Device::open("");
  CHECK_FALSE(dev.name().empty());
  CHECK(dev.first_active_port().has_value());
}

TEST_CASE("DeviceList: its entries, and a moved-from list is empty", "[rxe][verbs][device]") {
  DeviceList list;
  REQUIRE(list.size() >= 2);  // the test bed's two rxe devices
  CHECK(list.devices().size() == list.size());
  CHECK(list.find(dev0()) != nullptr);
  CHECK(list.find(dev1()) != nullptr);
  const std::size_t n = list.size();
  DeviceList moved(std::move(list));
  CHECK(moved.size() == n);
  CHECK(moved.names().size() == n);
  CHECK(list.empty());  // NOLINT(bugprone-use-after-move): the moved-from state is the point
  CHECK(list.devices().empty());  // NOLINT(bugprone-use-after-move)
  CHECK(list.find(dev0()) == nullptr);  // NOLINT(bugprone-use-after-move)
}

TEST_CASE("an unknown device name lists the available ones", "[rxe][verbs][device]") {
  try {
    (void)Device::open("nosuchdev9");
    FAIL("opened a device that does not exist");
  } catch (const VerbsError& e) {
    const std::string what = e.what();
    CHECK_THAT(what, Contains("nosuchdev9"));
    CHECK_THAT(what, Contains("available:"));
    CHECK_THAT(what, Contains(dev0()));
    CHECK_THAT(what, Contains(dev1()));
  }
}

TEST_CASE("GID choice on rxe: RoCE v2 with the netdev's IPv4 address", "[rxe][verbs][gid]") {
  Device dev = Device::open(dev0());
  const GidTable table = dev.gid_table(1);
  const GidEntry& g = choose_gid(table, dev.port(1).link_layer);
  CHECK(g.type == GidType::kRoceV2);
  CHECK(g.is_ipv4());
  CHECK(g.address() == env_or("FABENCH_RXE_IP0", "10.50.0.1"));

  // sysfs and libibverbs (ibv_query_gid_table, what gid_table() reads) describe the same table.
  const GidTable via_verbs = query_gid_table(dev.get(), 1);
  const GidTable via_sysfs = read_gid_table(kSysfsInfiniband, dev0(), 1);
  REQUIRE(via_verbs.entries.size() == via_sysfs.entries.size());
  REQUIRE(table.entries.size() == via_sysfs.entries.size());
  for (std::size_t i = 0; i < via_sysfs.entries.size(); ++i) {
    INFO("GID index " << via_sysfs.entries[i].index);
    CHECK(via_verbs.entries[i].index == via_sysfs.entries[i].index);
    CHECK(via_verbs.entries[i].gid == via_sysfs.entries[i].gid);
    CHECK(via_verbs.entries[i].type == via_sysfs.entries[i].type);
    CHECK(via_verbs.entries[i].ndev == via_sysfs.entries[i].ndev);
    CHECK(table.entries[i].index == via_sysfs.entries[i].index);
  }
  CHECK(via_verbs.link_layer == via_sysfs.link_layer);

  // The endpoint carries the same GID the kernel reports (ibv_query_gid).
  ProtectionDomain pd(dev);
  CompletionQueue cq(dev, 16);
  QueuePair qp(pd, cq, cq, IBV_QPT_RC);
  const Endpoint ep = qp.local_endpoint(QpConfig{});
  CHECK(ep.gid_index == g.index);
  CHECK(ep.gid == g.gid);
  CHECK(ep.qpn == qp.qpn());
  CHECK(ep.psn == qp.psn());
  CHECK(ep.psn <= 0xffffffU);

  QpConfig bad;
  bad.gid_index = 200;
  try {
    (void)qp.local_endpoint(bad);
    FAIL("GID index 200 accepted");
  } catch (const VerbsError& e) {
    CHECK_THAT(std::string(e.what()), Contains("valid indexes"));
    CHECK_THAT(std::string(e.what()), Contains(std::to_string(g.index) + " (RoCE v2"));
  }
}

TEST_CASE("setup errors say which limit was exceeded", "[rxe][verbs][device]") {
  Device dev = Device::open(dev0());
  ProtectionDomain pd(dev);
  const int max_cqe = dev.raw_attr().max_cqe;
  try {
    CompletionQueue cq(dev, max_cqe + 1);
    FAIL("CQ larger than max_cqe created");
  } catch (const VerbsError& e) {
    CHECK_THAT(std::string(e.what()), Contains(std::to_string(max_cqe)));
  }
  CompletionQueue cq(dev, 16);
  QpCaps caps;
  caps.max_send_wr = static_cast<std::uint32_t>(dev.raw_attr().max_qp_wr) + 1;
  try {
    QueuePair qp(pd, cq, cq, IBV_QPT_RC, caps);
    FAIL("QP deeper than max_qp_wr created");
  } catch (const VerbsError& e) {
    CHECK(e.verb() == "ibv_create_qp");
    CHECK_THAT(std::string(e.what()), Contains("max_qp_wr"));
  }
  // An access combination the spec forbids (remote write without local write).
  HostBuffer buf(4096);
  try {
    MemoryRegion mr(pd, buf, IBV_ACCESS_REMOTE_WRITE);
    FAIL("REMOTE_WRITE without LOCAL_WRITE registered");
  } catch (const VerbsError& e) {
    CHECK(e.verb() == "ibv_reg_mr");
    CHECK_THAT(std::string(e.what()), Contains("LOCAL_WRITE"));
  }
}

TEST_CASE("max_inline_data probe: the probed size is usable for inline sends", "[rxe][verbs][inline]") {
  Device probe = Device::open(dev0());
  const std::uint32_t max_inline = probe.max_inline_data(IBV_QPT_RC);
  REQUIRE(max_inline > 0);
  CHECK(probe.max_inline_data(IBV_QPT_RC) == max_inline);  // cached, stable

  QpCaps caps;
  caps.max_inline_data = max_inline;
  Side a(dev0(), IBV_QPT_RC, caps);
  Side b(dev0(), IBV_QPT_RC, caps);
  CHECK(a.qp.caps().max_inline_data >= max_inline);
  connect(a, b);

  // One byte more than the probe found must not create (the probe's bound is tight).
  QpCaps too_big;
  too_big.max_inline_data = max_inline + 1;
  CHECK_THROWS_AS(QueuePair(a.pd, a.cq, a.cq, IBV_QPT_RC, too_big), VerbsError);

  const std::uint32_t n = std::min<std::uint32_t>(max_inline, 256);
  ibv_sge rsge = b.mr.sge(0, n);
  ibv_recv_wr rwr{};
  rwr.wr_id = 1;
  rwr.sg_list = &rsge;
  rwr.num_sge = 1;
  post_recv_or_fail(b.qp, rwr);
  fill_pattern(a.at(0), n, 6);
  ibv_sge sge = a.mr.sge(0, n);
  ibv_send_wr wr{};
  wr.wr_id = 2;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
  post_send_or_fail(a.qp, wr);
  // Inline: the buffer is reusable right after post; scribbling on it now
  // must not change what arrives.
  fill_pattern(a.at(0), n, 7);
  expect_one(a, IBV_WC_SEND);
  const ibv_wc rwc = expect_one(b, IBV_WC_RECV);
  CHECK(rwc.byte_len == n);
  CHECK(has_pattern(b.at(0), n, 6));
}

TEST_CASE("CQ event mode: wait_event times out, then wakes on a completion", "[rxe][verbs][cq]") {
  Side a(dev0(), IBV_QPT_RC);
  Side b(dev0(), IBV_QPT_RC, QpCaps{}, /*channel=*/true);
  REQUIRE(b.cq.has_channel());
  connect(a, b);

  ibv_sge rsge = b.mr.sge(0, 64);
  ibv_recv_wr rwr{};
  rwr.wr_id = 1;
  rwr.sg_list = &rsge;
  rwr.num_sge = 1;
  post_recv_or_fail(b.qp, rwr);
  REQUIRE(b.cq.arm() == 0);

  const auto t0 = std::chrono::steady_clock::now();
  CHECK(b.cq.wait_event(100) == 0);  // nothing sent yet
  CHECK(std::chrono::steady_clock::now() - t0 >= std::chrono::milliseconds(90));

  fill_pattern(a.at(0), 64, 8);
  ibv_sge sge = a.mr.sge(0, 64);
  ibv_send_wr wr{};
  wr.wr_id = 2;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  post_send_or_fail(a.qp, wr);
  CHECK(b.cq.wait_event(static_cast<int>(kTimeout.count())) == 1);
  std::array<ibv_wc, 4> wcs{};
  const int got = b.cq.poll(wcs);
  REQUIRE(got == 1);
  CHECK(wcs[0].status == IBV_WC_SUCCESS);
  CHECK(wcs[0].opcode == IBV_WC_RECV);
  CHECK(has_pattern(b.at(0), 64, 8));
  expect_one(a, IBV_WC_SEND);
  // A CQ without a channel refuses to wait instead of blocking forever.
  CHECK(a.cq.wait_event(10) == -EINVAL);
}

TEST_CASE("move-assignment releases the old registration", "[rxe][verbs][mr]") {
  Side a(dev0(), IBV_QPT_RC);
  Side b(dev0(), IBV_QPT_RC);
  connect(a, b);

  HostBuffer extra(4096);
  MemoryRegion m1(a.pd, extra, IBV_ACCESS_LOCAL_WRITE);
  const std::uint32_t old_lkey = m1.lkey();
  MemoryRegion m2(a.pd, a.buf, IBV_ACCESS_LOCAL_WRITE);
  const std::uint32_t new_lkey = m2.lkey();
  m1 = std::move(m2);
  CHECK(m1.lkey() == new_lkey);
  CHECK(m2.get() == nullptr);  // NOLINT(bugprone-use-after-move): moved-from is empty

  // Had the old MR leaked, its lkey would still work: it must not.
  ibv_sge rsge = b.mr.sge(0, 64);
  ibv_recv_wr rwr{};
  rwr.wr_id = 1;
  rwr.sg_list = &rsge;
  rwr.num_sge = 1;
  post_recv_or_fail(b.qp, rwr);
  ibv_sge sge{reinterpret_cast<std::uintptr_t>(extra.data()), 64, old_lkey};
  ibv_send_wr wr{};
  wr.wr_id = 2;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  post_send_or_fail(a.qp, wr);
  const auto wcs = poll_n(a.cq, 1);
  REQUIRE(wcs.size() == 1);
  INFO(format_completion(wcs.front(), a.qp.describe()));
  // The spec says local protection error; rxe (6.1) reports a local QP
  // operation error for an lkey it cannot find. Either way: not success.
  const ibv_wc_status st = wcs.front().status;
  CHECK((st == IBV_WC_LOC_PROT_ERR || st == IBV_WC_LOC_QP_OP_ERR));

  // Moving a whole queue pair keeps it usable.
  QueuePair moved = std::move(a.qp);
  CHECK(moved.get() != nullptr);
  CHECK(a.qp.get() == nullptr);  // NOLINT(bugprone-use-after-move)
}
