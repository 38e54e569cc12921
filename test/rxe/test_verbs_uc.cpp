// UC on rxe: write, write-with-immediate and send, data verified; what UC
// cannot do (reads, atomics) is refused with a clear message.
#include <arpa/inet.h>

#include "verbs_testbed.hpp"

using namespace fabench::verbs;
using namespace fabench::verbs::testbed;

namespace {
constexpr std::uint32_t kBytes = 10000;  // multi-packet at MTU 4096
}

TEST_CASE("UC operations deliver the right bytes", "[rxe][verbs][uc]") {
  const Topology topo = GENERATE(topology_loopback(), topology_wire());
  INFO("topology " << topo.name << ": " << topo.a << " -> " << topo.b);
  Side a(topo.a, IBV_QPT_UC);
  Side b(topo.b, IBV_QPT_UC);
  connect(a, b);
  const Endpoint eb = b.endpoint();

  SECTION("RDMA write") {
    fill_pattern(a.at(0), kBytes, 1);
    ibv_sge sge = a.mr.sge(0, kBytes);
    ibv_send_wr wr{};
    wr.wr_id = 1;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = eb.addr + 128;
    wr.wr.rdma.rkey = eb.rkey;
    post_send_or_fail(a.qp, wr);
    expect_one(a, IBV_WC_RDMA_WRITE);
    // UC completes at the sender once sent; wait for the bytes themselves.
    CHECK(wait_for_pattern(b.at(128), kBytes, 1));
    CHECK(*b.at(127) == std::byte{0});
  }

  SECTION("RDMA write with immediate") {
    ibv_recv_wr rwr{};
    rwr.wr_id = 2;
    post_recv_or_fail(b.qp, rwr);
    fill_pattern(a.at(0), kBytes, 2);
    ibv_sge sge = a.mr.sge(0, kBytes);
    ibv_send_wr wr{};
    wr.wr_id = 3;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.imm_data = htonl(0x5EED0002U);
    wr.wr.rdma.remote_addr = eb.addr;
    wr.wr.rdma.rkey = eb.rkey;
    post_send_or_fail(a.qp, wr);
    expect_one(a, IBV_WC_RDMA_WRITE);
    const ibv_wc rwc = expect_one(b, IBV_WC_RECV_RDMA_WITH_IMM);
    CHECK(ntohl(rwc.imm_data) == 0x5EED0002U);
    CHECK(has_pattern(b.at(0), kBytes, 2));
  }

  SECTION("send/recv") {
    ibv_sge rsge = b.mr.sge(0, kBytes);
    ibv_recv_wr rwr{};
    rwr.wr_id = 4;
    rwr.sg_list = &rsge;
    rwr.num_sge = 1;
    post_recv_or_fail(b.qp, rwr);
    fill_pattern(a.at(0), kBytes, 3);
    ibv_sge sge = a.mr.sge(0, kBytes);
    ibv_send_wr wr{};
    wr.wr_id = 5;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    post_send_or_fail(a.qp, wr);
    expect_one(a, IBV_WC_SEND);
    const ibv_wc rwc = expect_one(b, IBV_WC_RECV);
    CHECK(rwc.byte_len == kBytes);
    CHECK(has_pattern(b.at(0), kBytes, 3));
  }

  SECTION("RDMA read is refused, and the message says why") {
    ibv_sge sge = a.mr.sge(0, 64);
    ibv_send_wr wr{};
    wr.wr_id = 6;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_READ;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = eb.addr;
    wr.wr.rdma.rkey = eb.rkey;
    const int rc = a.qp.post_send(wr);
    if (rc != 0) {
      const std::string text = a.qp.send_error(rc, wr).what();
      INFO(text);
      CHECK_THAT(text, Catch::Contains("RDMA_READ is not supported on UC qp"));
    } else {
      // A provider that accepts the WR must fail its completion.
      const auto wcs = poll_n(a.cq, 1);
      REQUIRE(wcs.size() == 1);
      CHECK(wcs.front().status != IBV_WC_SUCCESS);
    }
  }
}
