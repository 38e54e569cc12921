#include "fabench/world/driver.hpp"

#include <poll.h>
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <iostream>
#include <mutex>
#include <variant>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fabench/ctrl/heartbeat.hpp"
#include "fabench/ctrl/wire.hpp"
#include "fabench/harness/loop.hpp"

namespace fabench::world {

namespace {

using std::chrono::milliseconds;

constexpr std::uint32_t kClockEvery = 1024;          // idle spins between clock reads
constexpr std::uint64_t kWatchEveryNs = 10'000'000;  // control channels looked at every 10 ms

RankReport from_result(const ctrl::Result& r) {
  RankReport out;
  out.ok = r.status == ctrl::ResultStatus::kOk;
  out.error = r.error;
  out.record = r.record;
  return out;
}

ctrl::Result to_result(std::uint64_t seq, const RankReport& r) {
  ctrl::Result out;
  out.sequence = seq;
  out.status = r.ok ? ctrl::ResultStatus::kOk : ctrl::ResultStatus::kFailed;
  out.error = r.error;
  out.record = r.record;
  return out;
}

}  // namespace

Waiter::Waiter(const Watch& watch) noexcept
    : watch_(watch),
      stall_ns_(static_cast<std::uint64_t>(watch.stall.count()) * 1'000'000ULL),
      silence_ns_(static_cast<std::uint64_t>(watch.silence.count()) * 1'000'000ULL),
      t_progress_(harness::coarse_now_ns()),
      next_watch_(t_progress_ + kWatchEveryNs) {}

Waiter::Verdict Waiter::idle() noexcept {
  if (++idle_ >= watch_.spin_before_yield) {
    if (watch_.idle_sleep_us > 0) {
      const timespec ts{0, static_cast<long>(watch_.idle_sleep_us) * 1000L};
      nanosleep(&ts, nullptr);
    } else {
      sched_yield();
    }
  }
  if (idle_ % kClockEvery != 0 && watch_.spin_before_yield != 0) return Verdict::kGoOn;
  const std::uint64_t t = harness::coarse_now_ns();
  if (t_progress_ == 0) t_progress_ = t;
  if (t >= next_watch_) {
    next_watch_ = t + kWatchEveryNs;
    for (std::size_t i = 0; i < watch_.channels.size(); ++i) {
      const auto in = watch_.channels[i]->poll_incoming();
      if (in == ctrl::Channel::Incoming::kNothing) {
        if (watch_.silence.count() == 0 || t < watch_.channels[i]->last_heard_ns() + silence_ns_) continue;
        channel_ = i;
        silent_ = true;
        return Verdict::kControl;
      }
      if (in == ctrl::Channel::Incoming::kMessage && !watch_.stop_on_message) continue;
      channel_ = i;
      closed_ = in == ctrl::Channel::Incoming::kClosed;
      return Verdict::kControl;
    }
  }
  return t - t_progress_ > stall_ns_ ? Verdict::kStall : Verdict::kGoOn;
}

Leader::Leader(ctrl::Bootstrap& boot, Job& job, DriverOptions options)
    : boot_(boot), job_(job), o_(std::move(options)), n_(boot.size()) {}

bool Leader::dead(std::uint32_t r) const { return std::find(dead_.begin(), dead_.end(), r) != dead_.end(); }

Outcome Leader::run(std::size_t bench, std::uint64_t iterations, const Params& params) {
  Outcome out;
  out.ranks.assign(n_, RankReport{});
  if (broken_) {
    out.ok = false;
    out.error = "not run: " + broken_reason_;
    return out;
  }
  const std::string what = job_.name(bench);
  const std::uint64_t seq = ++seq_;
  try {
    ctrl::Command run{seq, "run", params, iterations};
    run.params.emplace_back("bench", std::to_string(bench));
    broadcast(run, true);
    job_.prepare(bench, params);
    if (!collect(seq, out, o_.timeout, "getting ready for " + what, false)) return abort(out);
    broadcast(ctrl::Command{++seq_, "go", {}, 0}, true);
  } catch (const std::exception& e) {
    out.ok = false;
    out.error = e.what();
    return abort(out);
  }
  Watch watch;
  watch.stall = o_.timeout;
  for (std::uint32_t r = 1; r < n_; ++r) watch.channels.push_back(&boot_.channel_to(r));
  watch.stop_on_message = false;
  watch.silence = o_.timeout;  // every rank's Heartbeat, from "go" to its result
  watch.spin_before_yield = o_.spin_before_yield;
  bool all = false;
  {
    // Through the run and the wait for results, the others hear from rank 0
    // every ctrl::keepalive_interval(--timeout): its silence means it is
    // stopped. Only this thread sends on the channels until it is gone
    // (abort() broadcasts after).
    std::mutex send_mutex;
    const ctrl::Heartbeat heartbeat(watch.channels, send_mutex, ctrl::keepalive_interval(o_.timeout));
    out.ranks[0] = job_.run(iterations, watch);
    if (out.ranks[0].closed_channel < 0) {
      // After a failure here, the others are failing too (or are the cause):
      // give them a short while to say so; silence then names the culprit.
      const auto wait = out.ranks[0].ok ? o_.timeout * 3 : std::min(o_.timeout, milliseconds(5000));
      all = collect(seq_, out, wait, what, true);
    }
  }
  if (out.ranks[0].closed_channel >= 0) {
    // A rank died mid-run: name it and stop the others now, before their stall.
    const auto r = static_cast<std::uint32_t>(out.ranks[0].closed_channel + 1);
    dead_.push_back(r);
    out.error = fmt::format("{} closed its connection (died) during {}", boot_.describe_rank(r), what);
    return abort(out);
  }
  if (!all || std::any_of(out.ranks.begin(), out.ranks.end(), [](const auto& r) { return !r.ok; })) {
    return abort(out);
  }
  return out;
}

// Results of `seq` from every other rank into out.ranks, waiting on all of
// them at once for at most `wait`; false (with out.error naming the ranks)
// when one failed, died or stayed silent. `live`: the ranks send Keepalives
// meanwhile (from "go" to their result), so one that sent nothing at all for
// --timeout is stopped or cut off: named at once, and the wait ends there.
bool Leader::collect(std::uint64_t seq, Outcome& out, milliseconds wait, const std::string& what, bool live) {
  using Clock = std::chrono::steady_clock;
  std::vector<std::string> culprits;  // dead or silent: the news
  std::vector<std::string> failed;    // failed on their own (often because of a culprit)
  std::vector<std::uint32_t> pending;
  for (std::uint32_t r = 1; r < n_; ++r) {
    if (!dead(r)) pending.push_back(r);
  }
  const auto deadline = Clock::now() + wait;
  while (!pending.empty() && culprits.empty()) {
    std::vector<pollfd> fds;
    for (const auto r : pending) fds.push_back({boot_.channel_to(r).fd(), POLLIN, 0});
    const auto left = std::chrono::ceil<milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) break;
    // Live: wake at least every 100 ms to look for a rank fallen silent.
    const auto slice = live ? std::min<std::int64_t>(left, 100) : left;
    if (::poll(fds.data(), fds.size(), static_cast<int>(slice)) == 0 && !live) break;
    std::vector<std::uint32_t> still;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      const std::uint32_t r = pending[i];
      ctrl::Channel& ch = boot_.channel_to(r);
      // Keepalives are taken here; a result (or a hang-up) is left for recv().
      if (fds[i].revents != 0 && ch.poll_incoming() != ctrl::Channel::Incoming::kNothing) {
        try {
          ctrl::Message m = ch.recv(o_.timeout);
          const auto* res = std::get_if<ctrl::Result>(&m);
          if (res == nullptr || res->sequence != seq) {
            failed.push_back(fmt::format("{} answered out of turn during {}", boot_.describe_rank(r), what));
            continue;
          }
          out.ranks[r] = from_result(*res);
          if (!out.ranks[r].ok) failed.push_back(out.ranks[r].error);
        } catch (const ctrl::CtrlError&) {
          culprits.push_back(fmt::format("{} closed its connection (died) during {}", boot_.describe_rank(r), what));
          dead_.push_back(r);
        }
        continue;
      }
      if (live && ch.silent_for(o_.timeout)) {
        culprits.push_back(fmt::format("{} sent nothing for {} (stopped or unreachable) during {}",
                                       boot_.describe_rank(r), ctrl::format_duration(o_.timeout), what));
        dead_.push_back(r);
        continue;
      }
      still.push_back(r);
    }
    pending = std::move(still);
  }
  if (culprits.empty()) {
    for (const auto r : pending) {
      if (!out.ranks[0].ok && live) {
        // Rank 0 failed first and waited only briefly: a rank still heard from (its Keepalives;
        // the silent ones are culprits above) is busy, not the cause. Rank 0's error leads, and
        // abort() tells this rank to stop.
        failed.push_back(
            fmt::format("{} was still running {} later", boot_.describe_rank(r), ctrl::format_duration(wait)));
        continue;
      }
      culprits.push_back(fmt::format("{} did not answer within {} (stopped or hung) during {}", boot_.describe_rank(r),
                                     ctrl::format_duration(wait), what));
      dead_.push_back(r);
    }
  }
  if (!out.ranks[0].ok) failed.insert(failed.begin(), "rank 0: " + out.ranks[0].error);
  if (culprits.empty() && failed.empty()) return true;
  out.ok = false;
  out.error = fmt::format("{}", fmt::join(culprits.empty() ? failed : culprits, "; "));
  return false;
}

Outcome Leader::abort(Outcome out) {
  out.ok = false;
  if (out.error.empty()) out.error = out.ranks[0].error;
  broken_ = true;
  broken_reason_ = out.error;
  broadcast(ctrl::Error{out.error});
  return out;
}

void Leader::finish() {
  if (!broken_) broadcast(ctrl::Command{++seq_, "bye", {}, 0});
}

// To every live rank; `strict` rethrows a failure (before a run), else best effort.
void Leader::broadcast(const ctrl::Message& m, bool strict) {
  for (std::uint32_t r = 1; r < n_; ++r) {
    if (dead(r)) continue;
    try {
      boot_.channel_to(r).send(m, strict ? o_.timeout : milliseconds(500));
    } catch (const ctrl::CtrlError& e) {
      dead_.push_back(r);
      if (strict) {
        throw ctrl::CtrlError(e.kind(),
                              fmt::format("{} closed its connection (died): {}", boot_.describe_rank(r), e.what()));
      }
    }
  }
}

namespace {

class Follower {
 public:
  Follower(ctrl::Bootstrap& boot, Job& job, const DriverOptions& o)
      : boot_(boot), job_(job), o_(o), root_(boot.channel_to(0)) {}

  int loop() {
    for (;;) {
      // Rank 0 spends time in Google Benchmark between runs: wait generously.
      ctrl::Message msg = root_.recv(o_.timeout * 10);
      if (const auto* e = std::get_if<ctrl::Error>(&msg)) return fail(e->text);
      const auto* c = std::get_if<ctrl::Command>(&msg);
      if (c == nullptr) return fail(fmt::format("rank 0 sent {} between runs", ctrl::type_name(ctrl::type_of(msg))));
      if (c->benchmark == "bye") return 0;
      if (c->benchmark != "run") return fail(fmt::format("rank 0 sent unknown command '{}'", c->benchmark));
      if (const int rc = run(*c); rc != 0) return rc;
    }
  }

  int fail(const std::string& text) const {
    std::cerr << fmt::format("{} rank {}: error: {}\n", o_.prog, boot_.rank(), text);
    return 1;
  }

 private:
  int run(const ctrl::Command& c) {
    Params params;
    std::size_t bench = 0;
    bool named = false;
    for (const auto& [k, v] : c.params) {
      if (k == "bench") {
        bench = std::stoul(v);
        named = true;
      } else {
        params.emplace_back(k, v);
      }
    }
    if (!named) return fail("rank 0 sent a run without a benchmark");
    RankReport ready;
    try {
      job_.prepare(bench, params);
    } catch (const std::exception& e) {
      ready.ok = false;
      ready.error = fmt::format("rank {}: {}", boot_.rank(), e.what());
    }
    root_.send(to_result(c.sequence, ready));
    ctrl::Message go = root_.recv(o_.timeout);
    if (const auto* e = std::get_if<ctrl::Error>(&go)) return fail(e->text);
    const auto* g = std::get_if<ctrl::Command>(&go);
    if (g == nullptr || g->benchmark != "go") return fail("rank 0 did not say go");
    // A job whose prepare() failed must not run (found by fuzz/world_follow).
    if (!ready.ok) return fail(fmt::format("{}; rank 0 said go regardless", ready.error));
    const std::string what = job_.name(bench);
    Watch watch;
    watch.stall = o_.timeout;
    watch.channels = {&root_};
    watch.stop_on_message = true;
    watch.silence = o_.timeout;  // rank 0's Heartbeat
    watch.spin_before_yield = o_.spin_before_yield;
    RankReport mine;
    {
      // Rank 0 waits on every rank at once until it has their results: its
      // Waiter and collect() take this rank's silence to mean it is stopped.
      std::mutex send_mutex;
      const ctrl::Heartbeat heartbeat({&root_}, send_mutex, ctrl::keepalive_interval(o_.timeout));
      mine = job_.run(c.iterations, watch);
    }
    if (!mine.ok && root_.poll_incoming() != ctrl::Channel::Incoming::kNothing) {
      // Rank 0 spoke or went away mid-run: its word (or its absence) is the news.
      try {
        ctrl::Message m = root_.recv(o_.timeout);
        if (const auto* e = std::get_if<ctrl::Error>(&m)) return fail(e->text);
        return fail(fmt::format("rank 0 sent {} during {}", ctrl::type_name(ctrl::type_of(m)), what));
      } catch (const std::exception& e) {
        return fail(fmt::format("{} during {}", e.what(), what));
      }
    }
    if (!mine.ok) mine.error = fmt::format("rank {}: {}", boot_.rank(), mine.error);
    if (!mine.ok && root_.silent_for(o_.timeout)) return root_silent(what, mine);
    root_.send(to_result(g->sequence, mine));
    if (mine.ok) return 0;
    // Rank 0 names the culprit after waiting up to 5 s for every rank's
    // word, sending Keepalives meanwhile; if it falls silent, it is the one stuck.
    try {
      ctrl::Message m = root_.recv_live(o_.timeout);
      if (const auto* e = std::get_if<ctrl::Error>(&m)) return fail(e->text);
      return fail(mine.error);
    } catch (const ctrl::CtrlError& e) {
      if (e.kind() == ctrl::CtrlError::Kind::kTimeout) return root_silent(what, mine);
      return fail(fmt::format("{}; then {}", mine.error, e.what()));
    }
  }

  // Rank 0 sent nothing, not even a Keepalive, for --timeout: it is the news, this rank's own failure the detail.
  int root_silent(const std::string& what, const RankReport& mine) const {
    return fail(fmt::format("rank 0 ({}) sent nothing for {} (stopped or unreachable) during {}; {}", boot_.hosts()[0],
                            ctrl::format_duration(o_.timeout), what, mine.error));
  }

  ctrl::Bootstrap& boot_;
  Job& job_;
  const DriverOptions& o_;
  ctrl::Channel& root_;
};

}  // namespace

int follow(ctrl::Bootstrap& boot, Job& job, const DriverOptions& options) {
  Follower f(boot, job, options);
  try {
    return f.loop();
  } catch (const std::exception& e) {
    return f.fail(e.what());
  }
}

}  // namespace fabench::world
