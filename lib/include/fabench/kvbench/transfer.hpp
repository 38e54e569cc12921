// Transfer: one rank's part of a KV-cache transfer over a World, for the
// plans lib/kv builds (kv/plan.hpp). World ranks [0, P) are the prefill TP
// ranks, [P, P + D) the decode ones.
//
// Push (the prefill side writes), per iteration:
//   decode j:  poison its pool, tell each prefill peer "ready" (a zero-byte
//              write with immediate), wait for "done" on every lane of every
//              plan aimed at it, then check every page (kv::count_wrong_pages):
//              the done immediate arrives after all writes before it on its QP,
//              so the check proves the data was there at notification time.
//   prefill i: wait for "ready" from its decode peers; time from then to the
//              completion of its last write ("done" included).
// Pull (the decode side reads), per iteration:
//   decode j:  poison its pool; time its reads from the first post to the last
//              completion; check every page; tell each prefill peer "free".
//   prefill i: wait for "free" from each decode peer that reads from it.
//
// A plan's WRs are dealt round-robin to its lanes (QPs to the same peer).
// Each lane posts in chains of post_list WRs, at most send_depth in flight;
// every signal_every-th WR is signaled, and so is the last WR of each request
// on each lane: its completion (in order on its QP) says the request's bytes
// on that lane are done, so a request's time is when its last lane finishes.
// The side that waits for a whole transfer sees no completion while the other
// posts: the poster sends it a heartbeat (a zero-byte write with immediate)
// every second (every quarter of --timeout below 4 s), so a stall means a
// stopped peer, not a long transfer.
// Nothing allocates, logs or throws in run(); every wait is bounded (Watch).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <infiniband/verbs.h>

#include "fabench/kv/plan.hpp"
#include "fabench/world/driver.hpp"
#include "fabench/world/result.hpp"
#include "fabench/world/world.hpp"

namespace fabench::kvbench {

struct TransferOptions {
  std::uint32_t signal_every = 16;  // WRs per signaled WR on a lane (capped at send_depth / 2)
  std::uint32_t post_list = 1;      // WRs per ibv_post_send call
};

// What one rank measured in a run of n iterations.
struct TransferResult {
  bool ok = true;
  std::string error;
  int closed_channel = -1;
  std::uint64_t wrong_pages = 0;          // decode ranks: pages that failed the check, all iterations
  std::uint64_t wrs = 0;                  // posted per iteration (initiators)
  std::uint64_t bytes = 0;                // moved per iteration (initiators)
  std::vector<double> iteration_seconds;  // initiators: n
  std::vector<double> request_seconds;    // initiators: n x batch, iteration-major

  // The numbers by name: wrong_pages, wrs, bytes (u64); iteration_seconds,
  // request_seconds (f64 lists). from_record throws ctrl::RecordError naming a
  // field that is missing or of another kind, or when request_seconds is not
  // a whole number of requests per iteration.
  static constexpr auto record_fields() {
    return std::tuple{ctrl::RecordField{"wrong_pages", &TransferResult::wrong_pages},
                      ctrl::RecordField{"wrs", &TransferResult::wrs},
                      ctrl::RecordField{"bytes", &TransferResult::bytes},
                      ctrl::RecordField{"iteration_seconds", &TransferResult::iteration_seconds},
                      ctrl::RecordField{"request_seconds", &TransferResult::request_seconds}};
  }
  [[nodiscard]] ctrl::Record to_record() const { return ctrl::write_fields(*this); }
  [[nodiscard]] static TransferResult from_record(const ctrl::Record& r);
  [[nodiscard]] world::RankReport to_report() const { return world::report_of(*this); }
  // A report whose record does not read is a failed rank (an ok one's error names the field).
  [[nodiscard]] static TransferResult from_report(const world::RankReport& r);
};

class Transfer {
 public:
  // `plans` are all plans of the spec (every rank builds the same list); the
  // rank keeps those it posts or receives. The world's arena holds the rank's
  // pool at offset 0 and must be large enough.
  Transfer(const world::World& world, const kv::KvSpec& spec, std::span<const kv::PairPlan> plans,
           const TransferOptions& options);
  Transfer(const Transfer&) = delete;
  Transfer& operator=(const Transfer&) = delete;

  // Receives for the notifications: once per world, before the first run.
  static void post_receives(const world::World& world);

  [[nodiscard]] kv::Side side() const noexcept { return side_; }
  [[nodiscard]] std::uint32_t side_rank() const noexcept { return side_rank_; }
  [[nodiscard]] bool initiator() const noexcept { return !queues_.empty(); }
  [[nodiscard]] std::uint64_t pool_bytes() const noexcept { return pool_bytes_; }

  // Fills the pool with what the rank holds (prefill) or poisons it (decode).
  void fill();
  [[nodiscard]] TransferResult run(std::uint64_t iterations, const world::Watch& watch);

 private:
  // One lane of one plan this rank posts: its WRs in posting order.
  struct Queue {
    const verbs::QueuePair* qp = nullptr;
    std::uint32_t peer = 0;  // world rank
    std::vector<ibv_sge> sges;
    std::vector<ibv_send_wr> wrs;
    std::vector<std::uint32_t> request;  // per WR
    std::vector<std::uint8_t> final;     // per WR: the last of its request on this lane
    ibv_send_wr done{};                  // push: the "done" notification after the last write
    std::size_t posted = 0;
    std::size_t completed = 0;  // every WR before this has completed
    bool done_posted = false;
    bool finished = false;
  };
  void build_queue(const kv::PairPlan& plan, std::uint32_t lane);
  [[nodiscard]] bool post_some(std::string& error) noexcept;
  [[nodiscard]] int pump(std::string& error) noexcept;
  [[gnu::cold]] void failure(const ibv_wc& failed, const std::string& qp, std::string& error) noexcept;
  [[nodiscard]] bool notify(std::span<const std::uint32_t> peers, std::uint32_t kind, std::uint32_t iteration,
                            std::string& error) noexcept;
  [[nodiscard]] bool heartbeat(std::string& error) noexcept;
  [[nodiscard]] bool wait_for(std::uint32_t kind, std::uint64_t count, bool sends_too, world::Waiter& waiter,
                              TransferResult& r, const char* what);
  [[nodiscard]] bool run_iteration(std::uint64_t it, world::Waiter& waiter, world::Waiter& passive, TransferResult& r);
  void record(TransferResult& r) const;
  void start_iteration() noexcept;
  void poison() noexcept;

  const world::World& world_;
  kv::KvSpec spec_;
  TransferOptions options_;
  kv::Side side_;
  std::uint32_t side_rank_;
  std::uint32_t batch_;
  std::uint64_t pool_bytes_;
  std::vector<Queue> queues_;           // the lanes this rank posts on
  std::vector<std::uint32_t> notify_;   // world ranks told "ready" (push) / "free" (pull)
  std::vector<std::uint32_t> targets_;  // world ranks this rank's WRs go to: sent heartbeats
  std::uint64_t expected_done_ = 0;     // push, decode: done immediates per iteration
  std::uint64_t expected_ready_ = 0;    // push, prefill: ready immediates per iteration
  std::uint64_t expected_free_ = 0;     // pull, prefill: free immediates per iteration
  std::uint64_t wrs_ = 0;
  std::uint64_t bytes_ = 0;
  // Run state.
  std::uint64_t arrived_[4] = {0, 0, 0, 0};  // immediates by kind
  std::uint64_t control_outstanding_ = 0;    // notifications not yet completed
  std::uint64_t t0_ = 0;
  std::uint64_t last_heartbeat_ = 0;
  std::uint64_t heartbeat_ns_ = 1'000'000'000;  // run(): ctrl::keepalive_interval(watch.stall)
  std::vector<std::uint32_t> finals_left_;      // per request: lanes whose last WR has not completed
  std::vector<std::uint32_t> finals_;           // per request: lanes carrying it
  std::vector<std::uint64_t> request_done_;     // per request: ns
  std::size_t busy_queues_ = 0;
};

}  // namespace fabench::kvbench
