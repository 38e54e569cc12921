// RC on rxe: every operation moves real bytes and the test checks them, on
// one device (loopback) and across the veth wire (rxe0 <-> rxe1).
#include <arpa/inet.h>

#include <cstdint>
#include <cstring>

#include "verbs_testbed.hpp"

using namespace fabench::verbs;
using namespace fabench::verbs::testbed;

namespace {

std::uint64_t load_u64(const std::byte* p) {
  std::uint64_t v = 0;
  std::memcpy(&v, p, sizeof v);
  return v;
}
void store_u64(std::byte* p, std::uint64_t v) { std::memcpy(p, &v, sizeof v); }

ibv_send_wr rdma_wr(ibv_wr_opcode opcode, ibv_sge& sge, const Endpoint& remote, std::uint64_t offset,
                    std::uint64_t wr_id) {
  ibv_send_wr wr{};
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = opcode;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = remote.addr + offset;
  wr.wr.rdma.rkey = remote.rkey;
  return wr;
}

ibv_send_wr atomic_wr(ibv_wr_opcode opcode, ibv_sge& sge, const Endpoint& remote, std::uint64_t compare_add,
                      std::uint64_t swap, std::uint64_t wr_id) {
  ibv_send_wr wr{};
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = opcode;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.atomic.remote_addr = remote.addr;  // page-aligned, so 8-byte aligned
  wr.wr.atomic.rkey = remote.rkey;
  wr.wr.atomic.compare_add = compare_add;
  wr.wr.atomic.swap = swap;
  return wr;
}

// Larger than the 4096 B MTU, so multi-packet messages are covered.
constexpr std::uint32_t kBytes = 10000;

}  // namespace

TEST_CASE("RC operations deliver the right bytes", "[rxe][verbs][rc]") {
  const Topology topo = GENERATE(topology_loopback(), topology_wire());
  INFO("topology " << topo.name << ": " << topo.a << " -> " << topo.b);
  Side a(topo.a, IBV_QPT_RC);
  Side b(topo.b, IBV_QPT_RC);
  connect(a, b);
  const Endpoint eb = b.endpoint();

  SECTION("RDMA write lands exactly at the remote offset") {
    fill_pattern(a.at(0), kBytes, 1);
    ibv_sge sge = a.mr.sge(0, kBytes);
    ibv_send_wr wr = rdma_wr(IBV_WR_RDMA_WRITE, sge, eb, 4096, 11);
    post_send_or_fail(a.qp, wr);
    const ibv_wc wc = expect_one(a, IBV_WC_RDMA_WRITE);
    CHECK(wc.wr_id == 11);
    // RC: the completion means the responder acknowledged, so the data is there.
    CHECK(has_pattern(b.at(4096), kBytes, 1));
    CHECK(*b.at(4095) == std::byte{0});
    CHECK(*b.at(4096 + kBytes) == std::byte{0});
  }

  SECTION("RDMA write with immediate: data plus a receive completion carrying the immediate") {
    ibv_recv_wr rwr{};
    rwr.wr_id = 21;
    rwr.num_sge = 0;  // write-with-imm consumes a receive WR but no buffer
    post_recv_or_fail(b.qp, rwr);
    fill_pattern(a.at(0), kBytes, 2);
    ibv_sge sge = a.mr.sge(0, kBytes);
    ibv_send_wr wr = rdma_wr(IBV_WR_RDMA_WRITE_WITH_IMM, sge, eb, 0, 22);
    wr.imm_data = htonl(0xC0FFEE01U);
    post_send_or_fail(a.qp, wr);
    expect_one(a, IBV_WC_RDMA_WRITE);
    const ibv_wc rwc = expect_one(b, IBV_WC_RECV_RDMA_WITH_IMM);
    CHECK(rwc.wr_id == 21);
    CHECK((rwc.wc_flags & IBV_WC_WITH_IMM) != 0);
    CHECK(ntohl(rwc.imm_data) == 0xC0FFEE01U);
    CHECK(rwc.byte_len == kBytes);
    CHECK(has_pattern(b.at(0), kBytes, 2));
  }

  SECTION("RDMA read brings the remote bytes back") {
    fill_pattern(b.at(0), kBytes, 3);
    ibv_sge sge = a.mr.sge(16384, kBytes);
    ibv_send_wr wr = rdma_wr(IBV_WR_RDMA_READ, sge, eb, 0, 31);
    post_send_or_fail(a.qp, wr);
    const ibv_wc wc = expect_one(a, IBV_WC_RDMA_READ);
    CHECK(wc.wr_id == 31);
    CHECK(has_pattern(a.at(16384), kBytes, 3));
    CHECK(*a.at(16384 + kBytes) == std::byte{0});
  }

  SECTION("send/recv fills the posted receive buffer") {
    ibv_sge rsge = b.mr.sge(0, kBytes);
    ibv_recv_wr rwr{};
    rwr.wr_id = 41;
    rwr.sg_list = &rsge;
    rwr.num_sge = 1;
    post_recv_or_fail(b.qp, rwr);
    fill_pattern(a.at(0), kBytes, 4);
    ibv_sge sge = a.mr.sge(0, kBytes);
    ibv_send_wr wr{};
    wr.wr_id = 42;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    post_send_or_fail(a.qp, wr);
    expect_one(a, IBV_WC_SEND);
    const ibv_wc rwc = expect_one(b, IBV_WC_RECV);
    CHECK(rwc.wr_id == 41);
    CHECK(rwc.byte_len == kBytes);
    CHECK(has_pattern(b.at(0), kBytes, 4));
  }

  SECTION("atomic fetch-and-add returns the old value and adds") {
    store_u64(b.at(0), 100);
    ibv_sge sge = a.mr.sge(0, 8);
    ibv_send_wr wr = atomic_wr(IBV_WR_ATOMIC_FETCH_AND_ADD, sge, eb, 5, 0, 51);
    post_send_or_fail(a.qp, wr);
    expect_one(a, IBV_WC_FETCH_ADD);
    CHECK(load_u64(a.at(0)) == 100);
    CHECK(load_u64(b.at(0)) == 105);
  }

  SECTION("atomic compare-and-swap swaps only on a match") {
    store_u64(b.at(0), 105);
    ibv_sge sge = a.mr.sge(0, 8);
    ibv_send_wr hit = atomic_wr(IBV_WR_ATOMIC_CMP_AND_SWP, sge, eb, 105, 777, 61);
    post_send_or_fail(a.qp, hit);
    expect_one(a, IBV_WC_COMP_SWAP);
    CHECK(load_u64(a.at(0)) == 105);
    CHECK(load_u64(b.at(0)) == 777);

    ibv_send_wr miss = atomic_wr(IBV_WR_ATOMIC_CMP_AND_SWP, sge, eb, 1, 5, 62);
    post_send_or_fail(a.qp, miss);
    expect_one(a, IBV_WC_COMP_SWAP);
    CHECK(load_u64(a.at(0)) == 777);  // the value it found
    CHECK(load_u64(b.at(0)) == 777);  // unchanged
  }

  SECTION("a wrong rkey surfaces as a clear remote access error") {
    fill_pattern(a.at(0), 64, 5);
    ibv_sge sge = a.mr.sge(0, 64);
    Endpoint bad = eb;
    bad.rkey = ~eb.rkey;
    ibv_send_wr wr = rdma_wr(IBV_WR_RDMA_WRITE, sge, bad, 0, 71);
    post_send_or_fail(a.qp, wr);
    const auto wcs = poll_n(a.cq, 1);
    REQUIRE(wcs.size() == 1);
    const ibv_wc& wc = wcs.front();
    CHECK(wc.status == IBV_WC_REM_ACCESS_ERR);
    CHECK(wc.wr_id == 71);
    const std::string text = completion_error(wc, a.qp.describe()).what();
    INFO(text);
    CHECK_THAT(text, Catch::Contains("remote access error"));
    CHECK_THAT(text, Catch::Contains(ibv_wc_status_str(wc.status)));
    CHECK_THAT(text, Catch::Contains("wr_id 0x47"));
    CHECK_THAT(text, Catch::Contains(a.qp.describe()));
    CHECK(*b.at(0) == std::byte{0});  // nothing written
  }
}
