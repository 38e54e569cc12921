// TestSpec: one benchmark configuration (operation, transport, message size,
// queue options) as both ends agree on it. The leader sends it to the
// follower as Command parameters (to_params / from_params), so the follower
// builds exactly the same resources; validate() rejects contradictions with
// one line before any verbs object is created.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <infiniband/verbs.h>

namespace fabench::pair {

enum class Kind : std::uint8_t { kLatency, kBandwidth };

enum class Op : std::uint8_t { kWrite, kSend, kRead, kFetchAdd, kCompSwap };

// "write", "send", "read", "atomic_fadd", "atomic_cswap".
[[nodiscard]] std::string_view op_name(Op op) noexcept;
[[nodiscard]] std::optional<Op> parse_op(std::string_view text) noexcept;
// "rc", "uc", "ud" (lower case, as in benchmark names); parse accepts any case.
[[nodiscard]] std::string_view transport_name(ibv_qp_type type) noexcept;
[[nodiscard]] std::optional<ibv_qp_type> parse_transport(std::string_view text) noexcept;
[[nodiscard]] bool is_atomic(Op op) noexcept;
// Latency semantics: write/send ping-pong report half the round trip,
// read and atomics the full round trip (perftest's convention).
[[nodiscard]] bool reports_half_rtt(Op op) noexcept;

// Bytes of the UD receive buffer prefix where the GRH lands.
inline constexpr std::uint32_t kGrhBytes = 40;
// Atomics always move 8 bytes.
inline constexpr std::uint64_t kAtomicBytes = 8;

// The background load of a latency benchmark (fabench-lat --load, load.hpp):
// RDMA writes or reads streamed over RC QPs of their own, beside the
// ping-pong's QP, while the latency loop runs. One-sided, so the passive end
// spends no CPU on it.
struct LoadSpec {
  Op op = Op::kWrite;  // kWrite or kRead
  std::uint64_t msg_bytes = 65536;
  std::uint32_t qps = 1;
  std::uint64_t rate_bps = 0;  // offered payload bits/s of each streaming end; 0: flat out
  bool bidirectional = false;  // the follower streams too (toward the leader)

  // "load:write_65536", "load:read_1048576_qps2_rate2G_bidir": a Google
  // Benchmark name component; options appear only when not the default.
  [[nodiscard]] std::string name() const;

  friend bool operator==(const LoadSpec&, const LoadSpec&) = default;
};

struct TestSpec {
  Kind kind = Kind::kLatency;
  Op op = Op::kWrite;
  ibv_qp_type transport = IBV_QPT_RC;
  std::uint64_t msg_bytes = 2;
  std::uint32_t qps = 1;
  std::uint32_t tx_depth = 128;    // send queue depth: WRs in flight per QP
  std::uint32_t rx_depth = 512;    // receive WRs posted per QP (send/recv)
  std::uint32_t post_list = 1;     // WRs per ibv_post_send call
  std::uint32_t cq_mod = 1;        // one signaled WR per cq_mod WRs
  std::int32_t inline_bytes = -1;  // -1: inline when the device allows it
  bool bidirectional = false;
  bool events = false;          // wait on a completion channel instead of polling
  std::uint32_t mtu_bytes = 0;  // 0: active MTU of both ports
  std::uint8_t sl = 0;
  std::uint8_t traffic_class = 0;
  bool rdma_cm = false;
  bool reversed = false;  // bandwidth: the follower sends (writes, sends, reads) and times the run  // QPs connected
                          // through rdma_cm (-R), not from the exchanged endpoints
  // Latency only: streams beside the ping-pong (its resources: load_stream_spec()).
  std::optional<LoadSpec> load;
  // Device, port and GID index are each end's own choice (its Context): not part of a spec.

  // The defaults of a kind: latency keeps a shallow queue (tx depth 2),
  // bandwidth a deep one (128) with one signaled WR per 100.
  [[nodiscard]] static TestSpec defaults(Kind kind) noexcept;

  // "write_lat/rc/64", "send_bw/ud/4096/qps:2/post_list:8": the Google
  // Benchmark name; options appear only when they differ from defaults(kind);
  // a load adds its name ("write_lat/rc/64/load:write_65536").
  [[nodiscard]] std::string name() const;
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> to_params() const;
  // A load travels as load_* params, absent without one (a follower that
  // knows no load sees the plain latency spec).
  // Throws std::invalid_argument with one line on a missing or bad value.
  [[nodiscard]] static TestSpec from_params(const std::vector<std::pair<std::string, std::string>>& params);

  // Bytes of one QP's region: [tx slot][rx slot][atomic target][atomic result].
  [[nodiscard]] std::uint64_t slot_bytes() const noexcept;
  [[nodiscard]] std::uint64_t region_bytes() const noexcept;
  [[nodiscard]] std::uint64_t buffer_bytes() const noexcept { return region_bytes() * qps; }
  // The access a peer needs to this side's memory for this operation.
  [[nodiscard]] int remote_access() const noexcept;

  friend bool operator==(const TestSpec&, const TestSpec&) = default;
};

// The bandwidth-kind spec of a latency spec's load: RC, the load's op, size
// and QPs, the latency spec's MTU, SL and traffic class; a send queue of up
// to ~4 MiB per QP (4..128 WRs), signalled often enough (about every 64 KiB)
// that the load's rate can be read from its completions inside a short
// latency run.
[[nodiscard]] TestSpec load_stream_spec(const TestSpec& latency);

// Buffer bytes of a spec, its load's included (the server's --max-mem check).
[[nodiscard]] std::uint64_t total_buffer_bytes(const TestSpec& spec);

// Empty when the spec is coherent, else one line saying what is wrong
// (e.g. "read needs RC (UC and UD have no RDMA read)").
[[nodiscard]] std::string validate(const TestSpec& spec);

}  // namespace fabench::pair
