// Shared pieces of the rxe verbs tests: device names from the test bed's
// environment, one "side" of a connection (device, PD, CQ, buffer, MR, QP),
// and completion waits that always end (timeout), so nothing hangs.
#pragma once

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "fabench/verbs/ah.hpp"
#include "fabench/verbs/cq.hpp"
#include "fabench/verbs/device.hpp"
#include "fabench/verbs/error.hpp"
#include "fabench/verbs/mr.hpp"
#include "fabench/verbs/pd.hpp"
#include "fabench/verbs/qp.hpp"

namespace fabench::verbs::testbed {

// TCG-emulated guests are slow; still, every wait ends.
inline constexpr std::chrono::milliseconds kTimeout{10000};

inline std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? std::string(v) : std::string(fallback);
}
inline std::string dev0() { return env_or("FABENCH_RXE_DEV0", "rxe0"); }
inline std::string dev1() { return env_or("FABENCH_RXE_DEV1", "rxe1"); }

inline constexpr int kRcAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                                 IBV_ACCESS_REMOTE_ATOMIC;
inline constexpr int kUcAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
inline constexpr int kUdAccess = IBV_ACCESS_LOCAL_WRITE;

inline int access_for(ibv_qp_type type) {
  return type == IBV_QPT_RC ? kRcAccess : type == IBV_QPT_UC ? kUcAccess : kUdAccess;
}

// Member order is destruction order in reverse: the QP goes first, the
// device last.
struct Side {
  Device dev;
  ProtectionDomain pd;
  CompletionQueue cq;
  HostBuffer buf;
  MemoryRegion mr;
  QueuePair qp;
  QpConfig cfg;

  Side(const std::string& name, ibv_qp_type type, QpCaps caps = {}, bool channel = false, std::size_t bytes = 64 * 1024)
      : dev(Device::open(name)),
        pd(dev),
        cq(dev, 256, channel),
        buf(bytes),
        mr(pd, buf, access_for(type)),
        qp(pd, cq, cq, type, caps) {}

  [[nodiscard]] Endpoint endpoint() const {
    Endpoint ep = qp.local_endpoint(cfg);
    mr.describe(ep);
    return ep;
  }
  [[nodiscard]] std::byte* at(std::size_t offset) const { return buf.data() + offset; }
};

// Connects a and b to each other (RC/UC) or activates both (UD).
inline void connect(Side& a, Side& b) {
  const Endpoint ea = a.endpoint();
  const Endpoint eb = b.endpoint();
  a.qp.connect(eb, a.cfg);
  b.qp.connect(ea, b.cfg);
  REQUIRE(a.qp.state() == IBV_QPS_RTS);
  REQUIRE(b.qp.state() == IBV_QPS_RTS);
}

// Polls until n completions arrived or the timeout passed; returns what came.
inline std::vector<ibv_wc> poll_n(const CompletionQueue& cq, int n, std::chrono::milliseconds timeout = kTimeout) {
  std::vector<ibv_wc> out;
  std::vector<ibv_wc> batch(16);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (static_cast<int>(out.size()) < n && std::chrono::steady_clock::now() < deadline) {
    const int got = cq.poll(batch);
    if (got < 0) FAIL("ibv_poll_cq returned " << got);
    if (got == 0) {
      std::this_thread::yield();
      continue;
    }
    out.insert(out.end(), batch.begin(), batch.begin() + got);
  }
  return out;
}

// Exactly one successful completion of the given opcode, else a test failure
// with the formatted completion error.
inline ibv_wc expect_one(const Side& side, ibv_wc_opcode opcode) {
  const auto wcs = poll_n(side.cq, 1);
  if (wcs.empty()) FAIL("no completion on " << side.qp.describe() << " within " << kTimeout.count() << " ms");
  const ibv_wc& wc = wcs.front();
  if (wc.status != IBV_WC_SUCCESS) FAIL(format_completion(wc, side.qp.describe()));
  CHECK(wc.opcode == opcode);
  CHECK(wc.qp_num == side.qp.qpn());
  return wc;
}

inline void post_send_or_fail(const QueuePair& qp, ibv_send_wr& wr) {
  if (const int rc = qp.post_send(wr); rc != 0) FAIL(qp.send_error(rc, wr).what());
}
inline void post_recv_or_fail(const QueuePair& qp, ibv_recv_wr& wr) {
  if (const int rc = qp.post_recv(wr); rc != 0) FAIL(qp.recv_error(rc, wr).what());
}

// A byte pattern that differs per position and per seed, never all zero.
inline void fill_pattern(std::byte* p, std::size_t n, unsigned seed) {
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<std::byte>((i * 131 + seed * 7 + 1) & 0xff);
}
inline bool has_pattern(const std::byte* p, std::size_t n, unsigned seed) {
  for (std::size_t i = 0; i < n; ++i) {
    if (p[i] != static_cast<std::byte>((i * 131 + seed * 7 + 1) & 0xff)) return false;
  }
  return true;
}

// Unreliable transports complete at the sender before the data lands: wait
// for the bytes themselves (with a timeout).
inline bool wait_for_pattern(const std::byte* p, std::size_t n, unsigned seed,
                             std::chrono::milliseconds timeout = kTimeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    asm volatile("" ::: "memory");  // re-read memory the kernel writes behind our back
    if (has_pattern(p, n, seed)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

struct Topology {
  const char* name;
  std::string a;
  std::string b;
};

// One device talking to itself, and the two devices across the veth wire.
inline Topology topology_loopback() { return {"loopback", dev0(), dev0()}; }
inline Topology topology_wire() { return {"wire", dev0(), dev1()}; }

}  // namespace fabench::verbs::testbed
