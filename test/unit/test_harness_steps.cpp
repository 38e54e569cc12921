// harness/steps.hpp: the selective-signalling bookkeeping of a stream's WRs
// and the choice of the completion a failed loop reports.
#include <catch2/catch.hpp>

#include <deque>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "fabench/harness/steps.hpp"

using fabench::harness::first_failure_in;
using fabench::harness::flag_stream_wr;
using fabench::harness::StreamQp;

namespace {

ibv_wc wc_of(std::uint32_t qp, ibv_wc_status status, std::uint64_t wr_id = 0) {
  ibv_wc wc{};
  wc.qp_num = qp;
  wc.status = status;
  wc.wr_id = wr_id;
  return wc;
}

// A CQ's poll over a fixed list of completions, at most wcs.size() a call.
struct FakeCq {
  std::deque<ibv_wc> pending;
  int polls = 0;
  int operator()(std::span<ibv_wc> wcs) {
    ++polls;
    std::size_t n = 0;
    while (n < wcs.size() && !pending.empty()) {
      wcs[n++] = pending.front();
      pending.pop_front();
    }
    return static_cast<int>(n);
  }
};

}  // namespace

TEST_CASE("stream wr_ids carry the QP and the WRs a completion retires", "[harness][steps]") {
  const std::uint64_t id = fabench::harness::stream_wr_id(63, 100);
  CHECK(fabench::harness::stream_qp(id) == 63);
  CHECK(fabench::harness::stream_covered(id) == 100);
}

TEST_CASE("flag_stream_wr signals some WRs, each covering those since the last", "[harness][steps]") {
  StreamQp s;
  ibv_send_wr wr{};
  std::uint64_t retired = 0;
  for (std::uint64_t seq = 1; seq <= 10; ++seq) {
    const bool signaled = seq % 4 == 0 || seq == 10;
    wr.wr_id = 0;
    flag_stream_wr(wr, IBV_SEND_INLINE, signaled, 3, seq, s);
    CHECK((wr.send_flags & IBV_SEND_INLINE) != 0);
    CHECK(((wr.send_flags & IBV_SEND_SIGNALED) != 0) == signaled);
    if (signaled) {
      CHECK(fabench::harness::stream_qp(wr.wr_id) == 3);
      retired += fabench::harness::stream_covered(wr.wr_id);
      CHECK(retired == seq);  // every WR is retired by exactly one completion
    } else {
      CHECK(wr.wr_id == 0);
    }
  }
  CHECK(s.last_signal == 10);
}

TEST_CASE("first_failure reports a QP's first failure, not the flush after it", "[harness][steps]") {
  const ibv_wc flush = wc_of(7, IBV_WC_WR_FLUSH_ERR);
  SECTION("a failure that is not a flush is reported as it is, nothing polled") {
    FakeCq cq;
    cq.pending = {wc_of(7, IBV_WC_RETRY_EXC_ERR)};
    const ibv_wc got = first_failure_in(wc_of(7, IBV_WC_RNR_RETRY_EXC_ERR), std::ref(cq));
    CHECK(got.status == IBV_WC_RNR_RETRY_EXC_ERR);
    CHECK(cq.polls == 0);
  }
  SECTION("the same QP's failure further on the CQ wins over another QP's") {
    FakeCq cq;
    cq.pending = {wc_of(7, IBV_WC_WR_FLUSH_ERR), wc_of(8, IBV_WC_REM_ACCESS_ERR), wc_of(8, IBV_WC_SUCCESS),
                  wc_of(7, IBV_WC_RETRY_EXC_ERR)};
    CHECK(first_failure_in(flush, std::ref(cq)).status == IBV_WC_RETRY_EXC_ERR);
  }
  SECTION("else another QP's first failure") {
    FakeCq cq;
    cq.pending = {wc_of(8, IBV_WC_WR_FLUSH_ERR), wc_of(8, IBV_WC_REM_OP_ERR), wc_of(9, IBV_WC_REM_ACCESS_ERR)};
    const ibv_wc got = first_failure_in(flush, std::ref(cq));
    CHECK(got.status == IBV_WC_REM_OP_ERR);
    CHECK(got.qp_num == 8);
  }
  SECTION("only flushes: the flush, with a note that names where to look") {
    FakeCq cq;
    for (int i = 0; i < 40; ++i) cq.pending.push_back(wc_of(7, IBV_WC_WR_FLUSH_ERR));
    const ibv_wc got = first_failure_in(flush, std::ref(cq));
    CHECK(got.status == IBV_WC_WR_FLUSH_ERR);
    CHECK(cq.pending.empty());
    const std::string text = fabench::harness::failure_text(got, "RC qp 0x7");
    CHECK_THAT(text, Catch::Contains("Work Request Flushed Error"));
    CHECK_THAT(text, Catch::Contains("the peer's error names the cause"));
  }
  SECTION("the drain is bounded") {
    FakeCq cq;
    for (int i = 0; i < 10000; ++i) cq.pending.push_back(wc_of(7, IBV_WC_WR_FLUSH_ERR));
    CHECK(first_failure_in(flush, std::ref(cq), 4).status == IBV_WC_WR_FLUSH_ERR);
    CHECK(cq.polls == 4);
  }
}
