#include "fabench/pair/engines.hpp"

#include <algorithm>
#include <array>
#include <vector>

#include <fmt/format.h>

#include "engine_util.hpp"
#include "fabench/harness/clock.hpp"
#include "fabench/harness/loop.hpp"
#include "fabench/harness/steps.hpp"
#include "fabench/verbs/error.hpp"

namespace fabench::pair {

namespace engine_util {

using harness::Watchdog;

RunResult fail(std::string text) {
  RunResult r;
  r.ok = false;
  r.error = std::move(text);
  return r;
}

RunResult completion_failure(const Side& side, const ibv_wc& failed) {
  // A flush only says that its QP is in the error state: its first failure is reported.
  ibv_wc wc = harness::first_failure(side.send_cq(), failed);
  if (wc.status == IBV_WC_WR_FLUSH_ERR) wc = harness::first_failure(side.recv_cq(), failed);
  std::string qp = fmt::format("qp 0x{:x}", wc.qp_num);
  for (const auto& q : side.qps()) {
    if (q.qpn() == wc.qp_num) qp = q.describe();
  }
  return fail(harness::failure_text(wc, qp));
}

RunResult stall_failure(const Watchdog& w, const RunLimits& limits, std::string_view waiting_for, std::uint64_t done,
                        std::uint64_t total) {
  // The watched end: the leader (this side follows) or the follower (this side leads).
  const std::string_view who = limits.leader != nullptr ? "the leader" : "the peer";
  RunResult r;
  if (w.peer_gone()) {
    r = fail(
        fmt::format("{} closed its control connection (died or gave up) while this side waited for {} "
                    "({} of {} done)",
                    who, waiting_for, done, total));
  } else if (w.peer_silent()) {
    r = fail(
        fmt::format("{} sent nothing for {:.0f} s (stopped or unreachable) while this side waited for {} "
                    "({} of {} done)",
                    who, w.silence_seconds(), waiting_for, done, total));
  } else if (w.peer_done()) {
    return fail(fmt::format("{} ended its run while this side still waited for {} ({} of {} done)", who, waiting_for,
                            done, total));
  } else {
    return fail(fmt::format("no progress for {:.0f} s while waiting for {} ({} of {} done); peer dead or fabric down?",
                            w.stall_seconds(), waiting_for, done, total));
  }
  r.peer_lost = true;
  return r;
}

// How often a latency loop that moves looks at the watched channel: the
// leader's samples are the measurement, so rarely there.
std::uint64_t busy_poll_ns(const RunLimits& limits) noexcept {
  return limits.follower != nullptr ? Watchdog::kBusyPollLongNs : harness::kControlPollNs;
}

// The control channel a run's Watchdog looks at, if any.
ctrl::Channel* watched(const RunLimits& limits) noexcept {
  return limits.leader != nullptr ? limits.leader : limits.follower;
}

std::uint32_t send_flags_for(const Side& side, std::uint64_t bytes, ibv_wr_opcode opcode) {
  const bool can_inline = opcode == IBV_WR_RDMA_WRITE || opcode == IBV_WR_SEND || opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
  return (can_inline && bytes <= side.inline_threshold() && bytes > 0) ? static_cast<std::uint32_t>(IBV_SEND_INLINE)
                                                                       : 0U;
}

ibv_wr_opcode opcode_of(Op op) {
  switch (op) {
    case Op::kWrite: return IBV_WR_RDMA_WRITE;
    case Op::kSend: return IBV_WR_SEND;
    case Op::kRead: return IBV_WR_RDMA_READ;
    case Op::kFetchAdd: return IBV_WR_ATOMIC_FETCH_AND_ADD;
    case Op::kCompSwap: return IBV_WR_ATOMIC_CMP_AND_SWP;
  }
  return IBV_WR_SEND;
}

}  // namespace engine_util

namespace {

using engine_util::fail;
using engine_util::RecvRing;

}  // namespace

RunResult prepare_run(Side& side, Role role) {
  const auto& spec = side.spec();
  if (spec.kind == Kind::kLatency && spec.op == Op::kWrite) {
    // No write is in flight between runs: each ended with the last reply seen.
    *(side.rx(0) + spec.msg_bytes - 1) = std::byte{0};
  }
  const bool receives = spec.op == Op::kSend &&
                        (spec.kind == Kind::kLatency || spec.bidirectional || !initiates(spec, role));
  if (receives) {
    RecvRing ring(side);
    auto& posted = side.run_state().rx_posted;
    for (std::uint32_t q = 0; q < side.qps().size(); ++q) {
      while (posted[q] < spec.rx_depth) {
        if (const int rc = ring.post(side, q); rc != 0) {
          return fail(side.qps()[q].recv_error(rc, ring.wrs[q]).what());
        }
        ++posted[q];
      }
    }
  }
  return {};
}

std::uint64_t check_payload(const Side& side, Role role, std::uint64_t iterations, ctrl::Pulse* pulse) {
  const auto& spec = side.spec();
  if (is_atomic(spec.op)) return 0;  // checked per operation in the loop
  bool receives = false;
  std::uint64_t n = spec.msg_bytes;
  std::uint64_t offset = 0;
  switch (spec.op) {
    case Op::kWrite:
      receives = spec.kind == Kind::kLatency || spec.bidirectional || !initiates(spec, role);
      if (spec.kind == Kind::kLatency) n -= 1;  // the last byte is the ping-pong flag
      break;
    case Op::kSend:
      receives = spec.kind == Kind::kLatency || spec.bidirectional || !initiates(spec, role);
      if (spec.transport == IBV_QPT_UD) offset = kGrhBytes;
      break;
    case Op::kRead: receives = initiates(spec, role); break;
    default: break;
  }
  if (!receives) return 0;
  const std::uint8_t peer_seed = role == Role::kLeader ? kFollowerSeed : kLeaderSeed;
  std::uint64_t wrong = 0;
  const std::uint64_t used = std::min<std::uint64_t>(side.qps().size(), iterations);
  for (std::uint32_t q = 0; q < used; ++q) {
    const std::byte* p = side.rx(q) + offset;
    for (std::uint64_t i = 0; i < n; ++i) {
      wrong += static_cast<std::uint8_t>(p[i]) != Side::pattern_byte(peer_seed, i) ? 1 : 0;
      if (pulse != nullptr && i % Side::kPatternChunkBytes == Side::kPatternChunkBytes - 1) pulse->beat();
    }
  }
  return wrong;
}

}  // namespace fabench::pair
