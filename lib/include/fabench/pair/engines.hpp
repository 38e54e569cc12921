// The operation engines: the timed loops. Ping-pong and one-sided latency
// (run_latency) and streaming bandwidth/message rate (run_bandwidth), for
// either role of a pair. Work requests and SGEs are built before the loop;
// inside it only what changes per message is written, completions are
// polled in batches, and nothing allocates, logs, throws or dispatches
// virtually. Every wait is bounded by a stall timeout: no progress for that
// long ends the run with an error instead of a hang.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "fabench/ctrl/channel.hpp"
#include "fabench/ctrl/heartbeat.hpp"
#include "fabench/ctrl/record.hpp"
#include "fabench/harness/clock.hpp"
#include "fabench/harness/samples.hpp"
#include "fabench/pair/side.hpp"

namespace fabench::pair {

enum class Role : std::uint8_t { kLeader, kFollower };

// Whether `role` posts the spec's operation (writes, sends, reads): the
// leader, or the follower with --reversed (bandwidth); both ends with -b.
[[nodiscard]] inline bool initiates(const TestSpec& spec, Role role) noexcept {
  return spec.bidirectional || (role == Role::kLeader) != spec.reversed;
}

// Seeds of the payload pattern each role sends (Side::pattern_byte).
inline constexpr std::uint8_t kLeaderSeed = 0x11;
inline constexpr std::uint8_t kFollowerSeed = 0x5a;

struct RunLimits {
  // No progress (message sent, received or completed) for this long fails the run.
  std::chrono::milliseconds stall{10'000};
  // Follower: the leader's control channel, watched by the run's
  // harness::Watchdog (without blocking, at most every
  // harness::kControlPollNs, only while this side waits) so that a leader
  // that died, stopped or gave up ends the run at once instead of after the
  // stall timeout:
  //  - closed connection: the leader is gone; fail now;
  //  - no frame (the leader's Keepalives included) for the stall timeout:
  //    the leader is stopped or unreachable; fail;
  //  - a message waiting (its "finish"): the leader's part is over. A UC/UD
  //    receiver (no flow control, so messages may be dropped) then ends after
  //    a short quiet period; anything else still waiting fails after 1 s
  //    without progress (the leader gave up early).
  ctrl::Channel* leader = nullptr;
  // Leader: the follower's control channel, when the follower sends
  // Keepalives during runs (PeerInfo::run_keepalive). Watched the same way,
  // so that a follower that died or stopped ends the leader's wait (a
  // ping-pong reply, a completion) at once or within the stall timeout,
  // named, instead of after the stall and then a wait for its result.
  ctrl::Channel* follower = nullptr;
  // Leader: its Keepalives to the follower, beaten by the run's Watchdog
  // (the leader keeps no heartbeat thread: ctrl::Pulse).
  ctrl::Pulse* keepalive = nullptr;
  // Leader of a latency run: the clock of its per-iteration timestamps
  // (--clock). The samples come out in nanoseconds either way.
  harness::ClockSource clock = harness::ClockSource::kMonotonic;
};

struct RunResult {
  bool ok = true;
  std::string error;           // one line when !ok
  double seconds = 0;          // this side's traffic: first post to last completion
  std::uint64_t messages = 0;  // messages this side sent (bandwidth) or iterations (latency)
  std::uint64_t bytes = 0;     // payload bytes this side sent
  std::uint64_t received = 0;  // messages this side received (send/recv)
  std::uint64_t wrong = 0;     // payload bytes or atomic results that did not match
  bool peer_lost = false;      // the watched peer (RunLimits) closed its connection or fell silent

  // The numbers a follower sends its leader, by name: ok, messages, bytes,
  // received, wrong (u64), seconds (f64). Not error or peer_lost (the Result
  // carries the error). from_record throws ctrl::RecordError naming a field
  // that is missing or of another kind.
  static constexpr auto record_fields() {
    return std::tuple{ctrl::RecordField{"ok", &RunResult::ok},
                      ctrl::RecordField{"seconds", &RunResult::seconds},
                      ctrl::RecordField{"messages", &RunResult::messages},
                      ctrl::RecordField{"bytes", &RunResult::bytes},
                      ctrl::RecordField{"received", &RunResult::received},
                      ctrl::RecordField{"wrong", &RunResult::wrong}};
  }
  [[nodiscard]] ctrl::Record to_record() const { return ctrl::write_fields(*this); }
  [[nodiscard]] static RunResult from_record(const ctrl::Record& r) { return ctrl::read_fields<RunResult>(r); }
};

// Before a run: zero the ping-pong flags and top up receive queues, so that
// the peer may start sending as soon as this side says it is ready.
[[nodiscard]] RunResult prepare_run(Side& side, Role role);

// `samples` (leader only) receives one round-trip time in ns per iteration,
// timed with limits.clock; its capacity must be >= iterations.
[[nodiscard]] RunResult run_latency(Side& side, Role role, std::uint64_t iterations, harness::Samples* samples,
                                    const RunLimits& limits);

// Leader: sends `iterations` messages spread over the QPs (and, bidirectional
// or send, receives the peer's). Follower: the mirror image.
[[nodiscard]] RunResult run_bandwidth(Side& side, Role role, std::uint64_t iterations, const RunLimits& limits);

// After a run of `iterations` messages, outside timing: how many bytes of
// what the peer wrote, sent or let us read differ from the peer's pattern.
// Only the QPs that carried a message are looked at (the messages are dealt
// over the QPs in turn, so a run shorter than the QP count leaves the last
// ones idle, and a new Side's idle QPs hold nothing yet).
// `pulse` (a leader's Keepalives) is beaten every Side::kPatternChunkBytes.
[[nodiscard]] std::uint64_t check_payload(const Side& side, Role role, std::uint64_t iterations,
                                          ctrl::Pulse* pulse = nullptr);

}  // namespace fabench::pair
