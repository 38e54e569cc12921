// Internal to lib/src/pair: what the engines (engines.cpp: preparation and
// payload checks, latency.cpp: ping-pongs and one-sided latency, bandwidth.cpp:
// streaming) share. Not installed; not part of the library's interface.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <infiniband/verbs.h>

#include "fabench/harness/loop.hpp"
#include "fabench/pair/engines.hpp"
#include "fabench/pair/side.hpp"

namespace fabench::pair::engine_util {

// A failed run with this text.
[[gnu::cold]] RunResult fail(std::string text);
// A completion with an error status, naming its QP.
[[gnu::cold]] RunResult completion_failure(const Side& side, const ibv_wc& wc);
// A loop that stopped moving: the watched peer gone, silent or done, or no progress.
[[gnu::cold]] RunResult stall_failure(const harness::Watchdog& w, const RunLimits& limits, std::string_view waiting_for,
                                      std::uint64_t done, std::uint64_t total);
// How often a latency loop that moves looks at the watched channel: the
// leader's samples are the measurement, so rarely there.
std::uint64_t busy_poll_ns(const RunLimits& limits) noexcept;
// The control channel a run's Watchdog looks at, if any.
ctrl::Channel* watched(const RunLimits& limits) noexcept;
// IBV_SEND_INLINE where the opcode and size allow it, else 0.
std::uint32_t send_flags_for(const Side& side, std::uint64_t bytes, ibv_wr_opcode opcode);
ibv_wr_opcode opcode_of(Op op);

// One prebuilt receive WR per QP, reposted as its completions arrive.
struct RecvRing {
  std::vector<ibv_sge> sges;
  std::vector<ibv_recv_wr> wrs;

  explicit RecvRing(const Side& side) : sges(side.qps().size()), wrs(side.qps().size()) {
    const auto& spec = side.spec();
    const auto len = static_cast<std::uint32_t>(spec.msg_bytes + (spec.transport == IBV_QPT_UD ? kGrhBytes : 0));
    for (std::uint32_t q = 0; q < side.qps().size(); ++q) {
      sges[q] = side.sge(q, side.rx(q), len);
      wrs[q] = ibv_recv_wr{};
      wrs[q].wr_id = q;
      wrs[q].sg_list = &sges[q];
      wrs[q].num_sge = 1;
    }
  }
  int post(const Side& side, std::uint32_t q) noexcept { return side.qps()[q].post_recv(wrs[q]); }
};

}  // namespace fabench::pair::engine_util
