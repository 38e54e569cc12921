#include "fabench/world/driver.hpp"

#include <algorithm>
#include <iostream>
#include <mutex>
#include <optional>
#include <variant>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "driver_util.hpp"
#include "fabench/ctrl/heartbeat.hpp"
#include "fabench/ctrl/wire.hpp"

namespace fabench::world {

using std::chrono::milliseconds;

Leader::Leader(ctrl::Bootstrap& boot, Job& job, DriverOptions options)
    : boot_(boot), job_(job), o_(std::move(options)), n_(boot.size()), lost_(boot.size()), offers_(boot.size()) {
  // From here on the others hear from rank 0 whatever it does (Google Benchmark between runs,
  // a job's set-up before its first run): its silence means it is stopped.
  beat_alive();
}

void Leader::beat_alive() {
  std::vector<ctrl::Channel*> alive;
  for (std::uint32_t r = 1; r < n_; ++r) {
    if (!dead(r)) alive.push_back(&boot_.channel_to(r));
  }
  if (beat_ && alive == beating_) return;
  beat_.reset();
  beating_ = alive;
  beat_.emplace(std::move(alive), send_mutex_, ctrl::keepalive_interval(o_.timeout));
}

bool Leader::dead(std::uint32_t r) const { return std::find(dead_.begin(), dead_.end(), r) != dead_.end(); }

std::string Leader::lost(std::uint32_t r) const { return r < lost_.size() ? lost_[r] : std::string(); }

Outcome Leader::run(std::size_t bench, std::uint64_t iterations, const Params& params) {
  Outcome out;
  out.ranks.assign(n_, RankReport{});
  if (broken_) {
    out.ok = false;
    out.error = "not run: " + broken_reason_;
    return out;
  }
  for (std::uint32_t r = 1; r < n_; ++r) {
    if (dead(r)) out.ranks[r] = RankReport{false, "not run: " + lost_[r], {}, {}, -1, true};
  }
  // A rank lost since the last run gets no more Keepalives (keep_going). Every send of this
  // thread holds send_mutex_ while the Heartbeat beats.
  beat_alive();
  const std::string what = job_.name(bench);
  const bool done = start(bench, iterations, params, out, what) &&
                    finish_run(iterations, out, what, std::chrono::steady_clock::now());
  if (!done) return abort(out);
  for (std::uint32_t r = 1; r < n_; ++r) {
    // keep_going: a rank found dead by a send is lost like one found by a gather.
    if (dead(r) && !out.ranks[r].lost) out.ranks[r] = RankReport{false, lost_[r], {}, {}, -1, true};
  }
  return out;
}

// "run", rank 0's own prepare(), the ready answers, the endpoints of a job
// that connects per run, then "go". False when the run cannot go on.
bool Leader::start(std::size_t bench, std::uint64_t iterations, const Params& params, Outcome& out,
                   const std::string& what) {
  const std::uint64_t seq = ++seq_;
  offers_.assign(n_, {});
  try {
    ctrl::Command run{seq, "run", params, iterations};
    run.params.emplace_back("bench", std::to_string(bench));
    broadcast(run, !o_.keep_going);
    job_.prepare(bench, params);
    if (!collect(seq, out, o_.timeout, "getting ready for " + what, false)) return false;
    if (job_.connects_per_run() && !exchange(seq, out, what)) return false;
    broadcast(ctrl::Command{++seq_, "go", {}, 0}, !o_.keep_going);
  } catch (const std::exception& e) {
    out.ok = false;
    out.error = e.what();
    return false;
  }
  return true;
}

// Hands each rank the endpoints of the rank it connects to (those offered
// with its ready answer; none when that rank is lost), connects rank 0 the
// same way, and waits until every rank connected: every QP of the run
// reaches RTS before any rank starts (a message that reached a QP still in
// INIT would be lost, and its retries could run out).
bool Leader::exchange(std::uint64_t seq, Outcome& out, const std::string& what) {
  offers_[0] = job_.endpoints();
  auto offer = [this](int j) {
    return j >= 0 && !dead(static_cast<std::uint32_t>(j)) ? offers_[static_cast<std::size_t>(j)]
                                                          : std::vector<verbs::Endpoint>{};
  };
  for (std::uint32_t r = 1; r < n_; ++r) {
    const int j = job_.connect_to(r);
    send(r, ctrl::EndpointExchange{j >= 0 ? static_cast<std::uint32_t>(j) : r, offer(j)}, !o_.keep_going);
  }
  const int mine = job_.connect_to(0);
  job_.connect(mine, offer(mine));
  return collect(seq, out, o_.timeout, "connecting for " + what, false);
}

// Rank 0's own run, then every other rank's result. False when the run failed (and the session
// breaks; with keep_going only when rank 0 saw a rank die mid-run).
bool Leader::finish_run(std::uint64_t iterations, Outcome& out, const std::string& what,
                        std::chrono::steady_clock::time_point t_go) {
  Watch watch;
  watch.stall = o_.timeout;
  for (std::uint32_t r = 1; r < n_; ++r) watch.channels.push_back(&boot_.channel_to(r));
  watch.on_message = Watch::OnMessage::kIgnore;  // early results wait
  watch.silence = o_.timeout;                    // every rank's Heartbeat, from "go" to its result
  watch.spin_before_yield = o_.spin_before_yield;
  out.ranks[0] = job_.run(iterations, watch);
  if (out.ranks[0].closed_channel >= 0) {
    // A rank died mid-run: name it and stop the others now, before their stall.
    const auto r = static_cast<std::uint32_t>(out.ranks[0].closed_channel + 1);
    dead_.push_back(r);
    out.error = fmt::format("{} closed its connection (died) during {}", boot_.describe_rank(r), what);
    return false;
  }
  // After a failure here, the others are failing too (or are the cause):
  // give them a short while to say so; silence then names the culprit.
  auto wait = out.ranks[0].ok ? o_.timeout * 3 : std::min(o_.timeout, milliseconds(5000));
  if (o_.run_limit.count() > 0) {
    const auto left = std::chrono::ceil<milliseconds>(t_go + o_.run_limit - std::chrono::steady_clock::now());
    wait = std::max(left, milliseconds(0));
  }
  if (!collect(seq_, out, wait, what, true)) return false;
  return o_.keep_going || std::all_of(out.ranks.begin(), out.ranks.end(), [](const auto& r) { return r.ok; });
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
  beat_.reset();  // "bye" is the last frame
  if (!broken_) broadcast(ctrl::Command{++seq_, "bye", {}, 0});
}

// To every live rank; `strict` rethrows a failure (before a run), else best effort.
void Leader::broadcast(const ctrl::Message& m, bool strict) {
  for (std::uint32_t r = 1; r < n_; ++r) send(r, m, strict);
}

void Leader::send(std::uint32_t r, const ctrl::Message& m, bool strict) {
  if (dead(r)) return;
  try {
    const std::lock_guard lock(send_mutex_);
    boot_.channel_to(r).send(m, strict ? o_.timeout : milliseconds(500));
  } catch (const ctrl::CtrlError& e) {
    dead_.push_back(r);
    lost_[r] = fmt::format("{} closed its connection (died): {}", boot_.describe_rank(r), e.what());
    if (strict) throw ctrl::CtrlError(e.kind(), lost_[r]);
  }
}

}  // namespace fabench::world
