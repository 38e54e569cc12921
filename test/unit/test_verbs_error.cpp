// Error texts: check_rc/check_ptr, hints, failed completions, post errors.
#include <catch2/catch.hpp>

#include <sys/resource.h>

#include <cerrno>
#include <string>

#include "fabench/verbs/ah.hpp"
#include "fabench/verbs/error.hpp"
#include "fabench/verbs/qp.hpp"

using namespace fabench::verbs;
using Catch::Contains;

TEST_CASE("check_rc: the returned value is the error number", "[verbs][error]") {
  CHECK_NOTHROW(check_rc(0, "ibv_modify_qp"));
  errno = EAGAIN;  // must be ignored: int verbs return their error
  try {
    check_rc(EINVAL, "ibv_modify_qp", "RC qp 0x11 INIT -> RTR");
    FAIL("no throw");
  } catch (const VerbsError& e) {
    CHECK(e.verb() == "ibv_modify_qp");
    CHECK(e.error_number() == EINVAL);
    CHECK(std::string(e.what()) == "ibv_modify_qp: Invalid argument (RC qp 0x11 INIT -> RTR)");
  }
  // Some providers return the error negated.
  try {
    check_rc(-ENOMEM, "ibv_post_send");
    FAIL("no throw");
  } catch (const VerbsError& e) {
    CHECK(e.error_number() == ENOMEM);
    CHECK(std::string(e.what()) == "ibv_post_send: Cannot allocate memory");
  }
}

TEST_CASE("check_ptr: errno carries the error", "[verbs][error]") {
  int x = 0;
  CHECK(check_ptr(&x, "ibv_alloc_pd") == &x);
  errno = EACCES;
  try {
    (void)check_ptr(static_cast<int*>(nullptr), "ibv_open_device", "rxe0");
    FAIL("no throw");
  } catch (const VerbsError& e) {
    CHECK(e.error_number() == EACCES);
    CHECK(std::string(e.what()) == "ibv_open_device: Permission denied (rxe0)");
  }
  errno = 0;  // a provider that forgot errno still gives an error, not "Success"
  try {
    (void)check_ptr(static_cast<int*>(nullptr), "ibv_create_cq");
    FAIL("no throw");
  } catch (const VerbsError& e) {
    CHECK(e.error_number() == EIO);
  }
}

TEST_CASE("memlock hint: the one line a user sees on ENOMEM from ibv_reg_mr", "[verbs][error]") {
  CHECK(memlock_hint(64 * 1024) == "locked memory limit 64 KiB; raise ulimit -l");
  CHECK(memlock_hint(8ULL << 20) == "locked memory limit 8 MiB; raise ulimit -l");
  CHECK_THAT(memlock_hint(RLIM_INFINITY), Contains("unlimited"));
  CHECK(format_verbs_error("ibv_reg_mr", ENOMEM, memlock_hint(64 * 1024)) ==
        "ibv_reg_mr: Cannot allocate memory (locked memory limit 64 KiB; raise ulimit -l)");
  // The process's own limit is what the no-argument form reports.
  rlimit lim{};
  REQUIRE(getrlimit(RLIMIT_MEMLOCK, &lim) == 0);
  CHECK(memlock_hint() == memlock_hint(lim.rlim_cur));
}

TEST_CASE("format_bytes", "[verbs][error]") {
  CHECK(format_bytes(0) == "0 B");
  CHECK(format_bytes(1000) == "1000 B");
  CHECK(format_bytes(1024) == "1 KiB");
  CHECK(format_bytes(1536) == "1.5 KiB");
  CHECK(format_bytes(1ULL << 30) == "1 GiB");
}

TEST_CASE("no-device hint names the Soft-RoCE command", "[verbs][error]") {
  CHECK(no_device_hint() == "no RDMA device; for Soft-RoCE: rdma link add rxe0 type rxe netdev eth0");
}

TEST_CASE("completion_error names status, vendor_err, wr_id, opcode and QP", "[verbs][error]") {
  ibv_wc wc{};
  wc.status = IBV_WC_REM_ACCESS_ERR;
  wc.vendor_err = 0x88;
  wc.wr_id = 42;
  wc.opcode = IBV_WC_RDMA_WRITE;
  wc.qp_num = 0x11;
  const VerbsError e = completion_error(wc, "RC qp 0x11 on rxe0");
  const std::string what = e.what();
  CHECK(e.wc_status() == IBV_WC_REM_ACCESS_ERR);
  CHECK_THAT(what, Contains("remote access error"));
  CHECK_THAT(what, Contains(ibv_wc_status_str(IBV_WC_REM_ACCESS_ERR)));
  CHECK_THAT(what, Contains("vendor_err 0x88"));
  CHECK_THAT(what, Contains("wr_id 0x2a"));
  CHECK_THAT(what, Contains("opcode RDMA_WRITE"));
  CHECK_THAT(what, Contains("qp_num 0x11"));
  CHECK_THAT(what, Contains("RC qp 0x11 on rxe0"));
  CHECK_THAT(what, Contains("failed"));

  wc.status = IBV_WC_RETRY_EXC_ERR;
  wc.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
  const std::string retry = format_completion(wc, "UC qp 0x12");
  CHECK_THAT(retry, Contains("transport retry counter exceeded"));
  CHECK_THAT(retry, Contains("RECV_RDMA_WITH_IMM"));
}

TEST_CASE("opcode names: every known opcode has a name, unknown ones stay visible", "[verbs][error]") {
  CHECK(wc_opcode_name(IBV_WC_FETCH_ADD) == "FETCH_ADD");
  CHECK(wc_opcode_name(IBV_WC_RECV) == "RECV");
  CHECK(wc_opcode_name(static_cast<ibv_wc_opcode>(77)) == "opcode 0x4d");
  CHECK(wr_opcode_name(IBV_WR_ATOMIC_CMP_AND_SWP) == "ATOMIC_CMP_AND_SWP");
  CHECK(wr_opcode_name(IBV_WR_RDMA_WRITE_WITH_IMM) == "RDMA_WRITE_WITH_IMM");
}

TEST_CASE("qp_type_supports: what UC and UD can carry", "[verbs][qp]") {
  CHECK(qp_type_supports(IBV_QPT_RC, IBV_WR_ATOMIC_FETCH_AND_ADD));
  CHECK(qp_type_supports(IBV_QPT_RC, IBV_WR_RDMA_READ));
  CHECK(qp_type_supports(IBV_QPT_UC, IBV_WR_RDMA_WRITE_WITH_IMM));
  CHECK(qp_type_supports(IBV_QPT_UC, IBV_WR_SEND));
  CHECK_FALSE(qp_type_supports(IBV_QPT_UC, IBV_WR_RDMA_READ));
  CHECK_FALSE(qp_type_supports(IBV_QPT_UC, IBV_WR_ATOMIC_CMP_AND_SWP));
  CHECK(qp_type_supports(IBV_QPT_UD, IBV_WR_SEND_WITH_IMM));
  CHECK_FALSE(qp_type_supports(IBV_QPT_UD, IBV_WR_RDMA_WRITE));
  CHECK(qp_type_name(IBV_QPT_UD) == "UD");
  CHECK(qp_state_name(IBV_QPS_RTS) == "RTS");
}

TEST_CASE("make_ah_attr: GRH exactly when the peer has a GID", "[verbs][ah]") {
  Endpoint remote;
  remote.qpn = 0x99;
  remote.lid = 7;
  remote.gid_index = -1;
  ibv_ah_attr ib = make_ah_attr(remote, -1, 1, 3);
  CHECK(ib.is_global == 0);
  CHECK(ib.dlid == 7);
  CHECK(ib.sl == 3);
  CHECK(ib.port_num == 1);

  remote.gid_index = 5;
  remote.gid = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 50, 0, 2};
  ibv_ah_attr roce = make_ah_attr(remote, 3, 1, 0, 106, 64);
  CHECK(roce.is_global == 1);
  CHECK(roce.grh.sgid_index == 3);
  CHECK(roce.grh.traffic_class == 106);
  CHECK(roce.grh.hop_limit == 64);
  CHECK(roce.grh.dgid.raw[14] == 0);
  CHECK(roce.grh.dgid.raw[15] == 2);
  CHECK(roce.grh.dgid.raw[12] == 10);
  // Peer on RoCE but no local GID chosen: refuse rather than send without GRH.
  CHECK_THROWS_AS(make_ah_attr(remote, -1, 1), VerbsError);
}
