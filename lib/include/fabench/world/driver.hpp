// The session protocol every N-rank binary (fabench-coll, fabench-kv) runs over
// the Bootstrap channels, independent of what a benchmark does. Rank 0 drives
// Google Benchmark and tells the others what to run:
//
//   rank 0                                   rank k
//   Command run {bench, params, n}     ->    Job::prepare(bench, params)
//                                      <-    Result ok ("ready")
//   Command go (to every rank)         ->    Job::run(n): n iterations, checked
//                                      <-    Result {ok, error, record}
//   ... Command bye                    ->    exit 0
//   Error (any time)                   ->    print it, exit 1
//
// While a benchmark runs, rank 0 watches every rank's channel and rank k
// watches rank 0's (Watch, Waiter): a rank that dies closes its channel and is
// named at once; one that stops leaves the others without progress for
// --timeout, after which rank 0 names the ranks that did not answer. From
// "go" until it has every result (or gives up), rank 0 sends each rank a
// Keepalive every second (ctrl::Heartbeat; every quarter of --timeout below
// 4 s: ctrl::keepalive_interval), and each rank sends rank 0 one from "go"
// until its result: a rank k that hears nothing from rank 0 for
// --timeout, in its run or while it waits for rank 0's word after its own
// failure, names rank 0 as stopped; rank 0 names a silent rank k the same
// way and tells the others. Either within about --timeout of the stop.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "fabench/ctrl/bootstrap.hpp"
#include "fabench/ctrl/channel.hpp"
#include "fabench/ctrl/record.hpp"

namespace fabench::world {

// What a rank watches while it waits for its CQs.
struct Watch {
  std::chrono::milliseconds stall{30'000};  // no completion for this long fails the run
  // Channels whose peer may end the run, looked at every ~10 ms of waiting:
  // a closed one (the peer died) stops the loop at once; so does one with a
  // message waiting when stop_on_message (a follower: rank 0 only speaks
  // mid-run to abort; rank 0 itself lets early results wait).
  std::vector<ctrl::Channel*> channels;
  bool stop_on_message = true;
  // When > 0: a channel that brought no frame (Keepalives included) for this
  // long stops the loop too (a follower: rank 0 sends Keepalives through
  // every run, so its silence means it is stopped or cut off).
  std::chrono::milliseconds silence{0};
  // Empty polls before sched_yield(): 0 = yield at every empty poll (ranks
  // outnumber cores), large = spin.
  std::uint32_t spin_before_yield = 0;
  // After spin_before_yield empty polls, sleep this long instead of yielding
  // (0: yield). For a rank that only waits for a notification: its spinning
  // would take a core from the one that posts (and from rxe's kernel threads).
  std::uint32_t idle_sleep_us = 0;
};

// The idle side of a polling loop: call progress() after a poll that found
// something, idle() after one that did not; idle() yields as Watch says,
// looks at the channels every 10 ms and the clock for the stall (the coarse
// clock, harness::coarse_now_ns(): a rank that yields at every empty poll
// reads it at every call, and a precise read is a system call in some guests).
class Waiter {
 public:
  enum class Verdict { kGoOn, kControl, kStall };

  explicit Waiter(const Watch& watch) noexcept;
  void progress() noexcept {
    idle_ = 0;
    t_progress_ = 0;  // read the clock again at the next idle check
  }
  [[nodiscard]] Verdict idle() noexcept;

  // After kControl: which channel, and whether it closed or fell silent (else it spoke).
  [[nodiscard]] std::size_t channel_index() const noexcept { return channel_; }
  [[nodiscard]] bool channel_closed() const noexcept { return closed_; }
  [[nodiscard]] bool channel_silent() const noexcept { return silent_; }
  [[nodiscard]] std::chrono::milliseconds stall() const noexcept { return watch_.stall; }

 private:
  const Watch& watch_;
  std::uint64_t stall_ns_;
  std::uint64_t silence_ns_;
  std::uint64_t t_progress_;
  std::uint64_t next_watch_;
  std::uint32_t idle_ = 0;
  std::size_t channel_ = 0;
  bool closed_ = false;
  bool silent_ = false;
};

using Params = std::vector<std::pair<std::string, std::string>>;

// What one rank reports for one run of a benchmark.
struct RankReport {
  bool ok = true;
  std::string error;           // one line when !ok
  ctrl::Record record;          // the job's own numbers by name (times, counts, checks)
  int closed_channel = -1;     // index into Watch::channels of one found closed mid-run
};

// One rank's part of the benchmarks of a session.
class Job {
 public:
  Job() = default;
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;
  virtual ~Job() = default;
  // Gets benchmark `bench` ready to run (buffers filled, work requests built).
  virtual void prepare(std::size_t bench, const Params& params) = 0;
  // `iterations` iterations of the prepared benchmark, then its checks.
  [[nodiscard]] virtual RankReport run(std::uint64_t iterations, const Watch& watch) = 0;
  // Names the benchmark in messages ("allreduce/ring/f32/1048576").
  [[nodiscard]] virtual std::string name(std::size_t bench) const = 0;
};

struct DriverOptions {
  std::string prog;  // "fabench-coll": prefixes followers' error lines
  std::chrono::milliseconds timeout{30'000};
  std::uint32_t spin_before_yield = 0;
};

// Rank 0's view of one run: every rank's report, or the one line that says
// which rank failed, died or stayed silent.
struct Outcome {
  bool ok = true;
  std::string error;
  std::vector<RankReport> ranks;
};

// Rank 0's side of the protocol. After a failure that leaves the session
// unusable (a rank dead, silent or failed), broken() is true and every later
// run answers at once with the reason.
class Leader {
 public:
  Leader(ctrl::Bootstrap& boot, Job& job, DriverOptions options);

  // Runs benchmark `bench` for n iterations on every rank, rank 0 included.
  [[nodiscard]] Outcome run(std::size_t bench, std::uint64_t iterations, const Params& params = {});
  // Says goodbye to every rank (when nothing broke).
  void finish();
  [[nodiscard]] bool broken() const noexcept { return broken_; }
  [[nodiscard]] const std::string& broken_reason() const noexcept { return broken_reason_; }
  [[nodiscard]] std::uint32_t size() const noexcept { return n_; }

 private:
  bool collect(std::uint64_t seq, Outcome& out, std::chrono::milliseconds wait, const std::string& what, bool live);
  Outcome abort(Outcome out);
  void broadcast(const ctrl::Message& m, bool strict = false);
  [[nodiscard]] bool dead(std::uint32_t r) const;

  ctrl::Bootstrap& boot_;
  Job& job_;
  DriverOptions o_;
  std::uint32_t n_;
  std::uint64_t seq_ = 0;
  bool broken_ = false;
  std::string broken_reason_;
  std::vector<std::uint32_t> dead_;
};

// Ranks 1..N-1: run rank 0's commands until goodbye. Returns the exit status.
int follow(ctrl::Bootstrap& boot, Job& job, const DriverOptions& options);

}  // namespace fabench::world
