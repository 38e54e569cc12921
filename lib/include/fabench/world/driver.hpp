// The session protocol every N-rank binary (fabench-coll, fabench-kv,
// fabench-accept) runs over the Bootstrap channels, independent of what a
// benchmark does. Rank 0 drives the benchmarks and tells the others what to run:
//
//   rank 0                                   rank k
//   Command run {bench, params, n}     ->    Job::prepare(bench, params)
//   [a job that connects per run (Job::connects_per_run): fabench-accept's pairs]
//                                      <-    EndpointExchange {k, Job::endpoints()}
//                                      <-    Result ok ("ready")
//   [per run:] EndpointExchange {j, j's endpoints}  ->  Job::connect(j, endpoints)
//   [per run:]                         <-    Result ok ("connected")
//   Command go (to every rank)         ->    Job::run(n): n iterations, checked
//                                      <-    Result {ok, error, record, json}
//   ... Command bye                    ->    exit 0
//   Error (any time)                   ->    print it, exit 1
//
// One gather (Leader::collect) takes every answer: it waits on all ranks at
// once, bounded, and names a rank that closed its channel (died), fell silent
// or did not answer. What a lost rank costs is the job's choice
// (DriverOptions::keep_going): the whole session (coll, kv: rank 0 tells the
// others and stops), or only that rank (accept: it is named in its report and
// left out of later runs, the others go on).
//
// One keepalive rule: for the Leader's whole life (from the world up to "bye",
// runs and the time between them in Google Benchmark alike), rank 0 sends each
// live rank a Keepalive every second (ctrl::Heartbeat; every quarter of
// --timeout below 4 s: ctrl::keepalive_interval), and each rank sends rank 0
// one from "go" until its result. Rank k waits for every word of rank 0's at
// most --timeout of silence, between runs too; while a benchmark runs, rank 0
// watches every rank's channel and rank k watches rank 0's (Watch, Waiter): a
// rank that dies closes its channel and is named at once; one that stops
// leaves the others without a frame for --timeout, after which it is named
// as stopped: rank k names rank 0, rank 0 names rank k (and tells the others
// unless keep_going). Either within about --timeout of the stop.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "fabench/ctrl/bootstrap.hpp"
#include "fabench/ctrl/channel.hpp"
#include "fabench/ctrl/heartbeat.hpp"
#include "fabench/ctrl/record.hpp"
#include "fabench/harness/wait.hpp"
#include "fabench/verbs/endpoint.hpp"

namespace fabench::world {

// What a rank watches while it waits for its CQs, and the wait itself: the one
// wait primitive (harness/wait.hpp), under the names the N-rank jobs use.
using Watch = harness::Watch;
using Waiter = harness::Watchdog;

using Params = std::vector<std::pair<std::string, std::string>>;

// What one rank reports for one run of a benchmark.
struct RankReport {
  bool ok = true;
  std::string error;        // one line when !ok
  ctrl::Record record;      // the job's own numbers by name (times, counts, checks)
  std::string json;         // a result that is a document, not numbers (fabench-accept's half of a pair)
  int closed_channel = -1;  // index into Watch::channels of one found closed mid-run
  bool lost = false;        // rank 0's view (keep_going): the rank died or fell silent; `error` says which
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
  // A job whose ranks connect anew for every run (fabench-accept: the pairs of
  // a round) says so; after prepare() each rank offers endpoints(), rank 0
  // hands rank r those of connect_to(r) (-1: none, an empty list), and
  // connect() takes them before "go". A job on a World connects once, at set-up.
  [[nodiscard]] virtual bool connects_per_run() const { return false; }
  [[nodiscard]] virtual std::vector<verbs::Endpoint> endpoints() const { return {}; }
  [[nodiscard]] virtual int connect_to(std::uint32_t /*rank*/) const { return -1; }
  virtual void connect(int /*rank*/, std::span<const verbs::Endpoint> /*remote*/) {}
  // `iterations` iterations of the prepared benchmark, then its checks.
  [[nodiscard]] virtual RankReport run(std::uint64_t iterations, const Watch& watch) = 0;
  // Names the benchmark in messages ("allreduce/ring/f32/1048576").
  [[nodiscard]] virtual std::string name(std::size_t bench) const = 0;
};

struct DriverOptions {
  std::string prog;  // "fabench-coll": prefixes followers' error lines
  std::chrono::milliseconds timeout{30'000};
  std::uint32_t spin_before_yield = 0;
  // false: a rank lost (died, silent, failed) breaks the session: rank 0 tells
  // the others and every later run answers "not run". true: only that rank is
  // lost, named in its RankReport (lost, error) and left out of later runs.
  bool keep_going = false;
  // The longest wait for the results, counted from "go"; 0: 3 x timeout after
  // rank 0's own run.
  std::chrono::milliseconds run_limit{0};
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
  // Why rank r is lost ("" while it is not).
  [[nodiscard]] std::string lost(std::uint32_t r) const;

 private:
  bool start(std::size_t bench, std::uint64_t iterations, const Params& params, Outcome& out, const std::string& what);
  bool exchange(std::uint64_t seq, Outcome& out, const std::string& what);
  bool finish_run(std::uint64_t iterations, Outcome& out, const std::string& what,
                  std::chrono::steady_clock::time_point t_go);
  bool collect(std::uint64_t seq, Outcome& out, std::chrono::milliseconds wait, const std::string& what, bool live);
  bool take(std::uint32_t r, std::uint64_t seq, Outcome& out, const std::string& what,
            std::vector<std::string>& culprits, std::vector<std::string>& failed);
  bool settle(Outcome& out, const std::vector<std::uint32_t>& pending, std::chrono::milliseconds wait, bool live,
              std::vector<std::string>& culprits, std::vector<std::string>& failed, const std::string& what);
  void lose(std::uint32_t r, std::string why, Outcome& out, std::vector<std::string>& culprits);
  Outcome abort(Outcome out);
  void broadcast(const ctrl::Message& m, bool strict = false);
  void send(std::uint32_t r, const ctrl::Message& m, bool strict);
  [[nodiscard]] bool dead(std::uint32_t r) const;
  // The Heartbeat on the channels of the ranks not lost (restarted when one is lost).
  void beat_alive();

  ctrl::Bootstrap& boot_;
  Job& job_;
  DriverOptions o_;
  std::uint32_t n_;
  std::uint64_t seq_ = 0;
  bool broken_ = false;
  std::string broken_reason_;
  std::vector<std::uint32_t> dead_;
  std::vector<std::string> lost_;                     // by rank: why it is lost (keep_going)
  std::vector<std::vector<verbs::Endpoint>> offers_;  // by rank: endpoints offered in this run
  std::mutex send_mutex_;                             // every send on the channels while a Heartbeat beats on them
  std::vector<ctrl::Channel*> beating_;               // the channels beat_ beats on
  std::optional<ctrl::Heartbeat> beat_;               // last: stops before what it uses goes
};

// Ranks 1..N-1: run rank 0's commands until goodbye. Returns the exit status.
int follow(ctrl::Bootstrap& boot, Job& job, const DriverOptions& options);

}  // namespace fabench::world
