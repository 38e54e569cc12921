// UD on rxe: send/recv through an AddressHandle; the receive buffer starts
// with the 40-byte GRH, the payload follows it.
#include <arpa/inet.h>

#include "verbs_testbed.hpp"

using namespace fabench::verbs;
using namespace fabench::verbs::testbed;

namespace {
constexpr std::uint32_t kGrhBytes = 40;
constexpr std::uint32_t kBytes = 1024;  // a UD message is at most one MTU
}  // namespace

TEST_CASE("UD send/recv delivers the payload after the GRH", "[rxe][verbs][ud]") {
  const Topology topo = GENERATE(topology_loopback(), topology_wire());
  INFO("topology " << topo.name << ": " << topo.a << " -> " << topo.b);
  Side a(topo.a, IBV_QPT_UD);
  Side b(topo.b, IBV_QPT_UD);
  connect(a, b);
  const Endpoint ea = a.endpoint();
  const Endpoint eb = b.endpoint();
  REQUIRE(eb.qkey == a.cfg.qkey);
  REQUIRE(ea.gid_index >= 0);  // RoCE: the GRH is mandatory

  AddressHandle ah(a.pd, eb, ea.gid_index, a.cfg.port);

  ibv_sge rsge = b.mr.sge(0, kGrhBytes + kBytes);
  ibv_recv_wr rwr{};
  rwr.wr_id = 1;
  rwr.sg_list = &rsge;
  rwr.num_sge = 1;
  post_recv_or_fail(b.qp, rwr);

  fill_pattern(a.at(0), kBytes, 9);
  ibv_sge sge = a.mr.sge(0, kBytes);
  ibv_send_wr wr{};
  wr.wr_id = 2;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND_WITH_IMM;
  wr.imm_data = htonl(0xABCD0009U);
  wr.send_flags = IBV_SEND_SIGNALED;
  ah.address(wr);
  post_send_or_fail(a.qp, wr);
  expect_one(a, IBV_WC_SEND);

  const ibv_wc rwc = expect_one(b, IBV_WC_RECV);
  CHECK(rwc.wr_id == 1);
  CHECK(rwc.byte_len == kGrhBytes + kBytes);
  CHECK(rwc.src_qp == a.qp.qpn());
  CHECK((rwc.wc_flags & IBV_WC_GRH) != 0);
  CHECK((rwc.wc_flags & IBV_WC_WITH_IMM) != 0);
  CHECK(ntohl(rwc.imm_data) == 0xABCD0009U);
  CHECK(has_pattern(b.at(kGrhBytes), kBytes, 9));
  CHECK(*b.at(kGrhBytes + kBytes) == std::byte{0});
}

TEST_CASE("UD refuses RDMA write with a clear message", "[rxe][verbs][ud]") {
  Side a(dev0(), IBV_QPT_UD);
  Side b(dev0(), IBV_QPT_UD);
  connect(a, b);
  const Endpoint ea = a.endpoint();
  const Endpoint eb = b.endpoint();
  AddressHandle ah(a.pd, eb, ea.gid_index, a.cfg.port);
  ibv_sge sge = a.mr.sge(0, 64);
  ibv_send_wr wr{};
  wr.wr_id = 3;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = IBV_SEND_SIGNALED;
  ah.address(wr);
  const int rc = a.qp.post_send(wr);
  if (rc != 0) {
    const std::string text = a.qp.send_error(rc, wr).what();
    INFO(text);
    CHECK_THAT(text, Catch::Contains("RDMA_WRITE is not supported on UD qp"));
  } else {
    const auto wcs = poll_n(a.cq, 1);
    REQUIRE(wcs.size() == 1);
    CHECK(wcs.front().status != IBV_WC_SUCCESS);
  }
}
