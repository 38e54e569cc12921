// fabench-ep's data path on one rank: dispatch and combine of lib/ep's Exchange over a World
// (one RC QP to every other rank, receives posted by the session), with RDMA writes with
// immediate.
//
// One call (docs/design/ep.md):
//   dispatch  normal: a zero-payload count write (4 bytes: the copies) to every other rank,
//             wait for every rank's count; then one payload write to each rank it sends copies
//             to; low-latency: one write per other rank, its header holding the counts. The
//             rank's own copies are a memcpy. Done when every expected payload has landed and
//             every write has completed.
//   combine   one reply write to each rank that sent it copies; done when the replies of every
//             rank it sent copies to have landed.
// The immediate says (parity, phase, count); arrivals that come early (a peer already in the
// next phase or call) are kept, not lost. Regions that land data alternate between two copies
// by call parity: a rank is at most one call ahead of any peer (every dispatch waits for a
// count or payload from every rank), so call i + 1 never writes what call i still reads.
//
// Layout of every rank's arena (sizes from the plan every rank computes alike):
//   [ send | recv[0] | recv[1] | reply | back[0] | back[1] ]
//   send    copies to each destination, packed once
//   recv    per source: what it dispatched here
//   reply   per source: the combine reply (made from recv at the first call, the same after)
//   back    per destination: its reply to this rank's copies
// Reference (the floor dispatch is read against, docs/results/ep.md): dispatch replaced by, per
// destination, one plain RDMA write of the same bytes to the same place and one zero-byte
// write-with-immediate as its notify; the rank's own copies are copied after the timed span.
// Combine and the checks are unchanged.
// The last call of every run is checked: its landing regions are cleared two calls before it
// (or after the previous run), then every copy and every combined token is checked bit for bit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fabench/ep/exchange.hpp"
#include "fabench/ep/plan.hpp"
#include "fabench/world/driver.hpp"
#include "fabench/world/world.hpp"

namespace fabench::epbench {

struct Layout {
  std::vector<std::uint64_t> send;     // per destination
  std::vector<std::uint64_t> recv[2];  // per source
  std::vector<std::uint64_t> reply;    // per source
  std::vector<std::uint64_t> back[2];  // per destination
  std::uint64_t total = 0;
};
// Rank r's layout for `plan`; every rank computes every other's the same way.
[[nodiscard]] Layout layout_of(const ep::EpPlan& plan, std::uint32_t r);
// The arena every rank registers: the largest layout.
[[nodiscard]] std::uint64_t arena_bytes(const ep::EpPlan& plan);

struct CallResult {
  double dispatch_s = 0;
  double combine_s = 0;
};

struct RunResult {
  bool ok = true;
  std::string error;
  std::vector<double> dispatch_s, combine_s;  // per call
  std::uint64_t bad_copies = 0;               // in the checked (last) call
  std::uint64_t bad_tokens = 0;
  bool control_event = false;
  std::size_t channel_index = 0;
  bool channel_closed = false;
};

class Engine {
 public:
  Engine(const world::World& world, const ep::EpPlan& plan, ep::Exchange exchange, bool reference = false);
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // `calls` dispatch + combine calls; the last one checked. Every rank runs the same number. The
  // first run of an engine starts with two untimed calls (engine_call.cpp: warm_up).
  [[nodiscard]] RunResult run(std::uint64_t calls, const world::Watch& watch);

 private:
  enum Phase : std::uint32_t { kCount = 0, kPayload = 1, kCombine = 2 };
  struct Wait;
  static constexpr std::uint64_t kWarmupCalls = 2;
  bool warm_up(const world::Watch& watch, RunResult& r);
  bool call(std::uint64_t index, const world::Watch& watch, CallResult& out, RunResult& r);
  bool dispatch(unsigned p, Wait& w);
  bool reference_dispatch(unsigned p, Wait& w);
  bool combine(unsigned p, Wait& w);
  bool post(std::uint32_t peer, std::uint64_t local_off, std::uint64_t bytes, std::uint64_t remote_off, std::uint32_t imm,
            std::string& error, bool with_imm = true);
  bool wait_for(unsigned p, Phase phase, const std::vector<std::uint32_t>& from, Wait& w);
  int poll(std::string& error);
  void make_replies(unsigned p, RunResult* r);
  void check(unsigned p, RunResult& r);
  void clear(unsigned p);
  [[nodiscard]] std::uint64_t dispatch_bytes(std::uint32_t s, std::uint32_t d) const;
  [[nodiscard]] std::uint64_t reply_bytes(std::uint32_t s, std::uint32_t d) const;

  const world::World& world_;
  const ep::EpPlan& plan_;
  ep::Exchange ex_;
  ep::Placement place_;
  std::uint32_t self_, n_;
  std::vector<Layout> layouts_;  // every rank's
  std::byte* base_;
  std::vector<std::uint32_t> send_to_, recv_from_;  // peers with copies each way (normal: payload writes)
  std::vector<std::uint32_t> others_;
  // mailbox_[parity][phase][source]: the immediate's value + 1, 0 until it came.
  std::vector<std::uint32_t> mailbox_[2][3];
  std::uint64_t outstanding_ = 0;
  std::uint64_t calls_ = 0;
  bool replies_made_ = false;
  bool reference_ = false;
};

// --plan-copies: the copies rank s sends rank d in one dispatch, one line per source s
// ("copies BENCH ep N src S: c_0 ... c_N-1"), then the bytes per copy each way.
[[nodiscard]] std::string copies_matrix(const ep::EpPlan& plan, const std::string& bench);

}  // namespace fabench::epbench
