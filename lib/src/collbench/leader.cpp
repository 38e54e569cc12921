#include <poll.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <tuple>
#include <variant>

#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fabench/collbench/roles.hpp"
#include "fabench/ctrl/wire.hpp"

namespace fabench::collbench {

namespace {

using std::chrono::milliseconds;

RankResult from_result(const ctrl::Result& r) {
  RankResult out;
  out.ok = r.status == ctrl::ResultStatus::kOk;
  out.error = r.error;
  if (r.values.size() == 5) {
    out.seconds = r.values[0];
    out.wrong = static_cast<std::uint64_t>(r.values[1]);
    out.hash = (static_cast<std::uint64_t>(r.values[2]) << 32) | static_cast<std::uint64_t>(r.values[3]);
    out.wire_bytes = static_cast<std::uint64_t>(r.values[4]);
  }
  return out;
}

struct Outcome {
  bool ok = true;
  std::string error;
  std::vector<RankResult> ranks;
};

class Leader {
 public:
  Leader(Session& s, const LeaderOptions& o) : s_(s), o_(o), n_(s.boot().size()) {}

  int run_all() {
    for (std::size_t i = 0; i < s_.specs().size(); ++i) {
      harness::register_fabric_benchmark(
          s_.specs()[i].name(), [this, i](benchmark::State& st) { bench(st, i); }, o_.registration);
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    if (!broken_) broadcast(ctrl::Command{++seq_, "bye", {}, 0});
    if (failures_ > 0) {
      std::cerr << fmt::format("fabench-coll: {} benchmark run(s) failed{}\n", failures_,
                               broken_ ? ": " + broken_reason_ : std::string());
      return 1;
    }
    return 0;
  }

 private:
  void bench(benchmark::State& state, std::size_t index) {
    if (broken_) {
      ++failures_;
      state.SkipWithError(("not run: " + broken_reason_).c_str());
      return;
    }
    const auto n = static_cast<std::uint64_t>(state.max_iterations);
    std::string label = resolve_auto(index);
    Outcome out;
    while (state.KeepRunningBatch(static_cast<benchmark::IterationCount>(n))) {
      out = run_once(index, n);
      if (!out.ok) break;
      double t_max = 0;
      for (const auto& r : out.ranks) t_max = std::max(t_max, r.seconds);
      state.SetIterationTime(t_max);
    }
    if (!out.ok) {
      ++failures_;
      state.SkipWithError(out.error.c_str());
      return;
    }
    report(state, index, n, out, label);
  }

  // --algo auto: the best algorithm measured in this run at the same
  // collective, type and size when all were measured, else the cost model's pick.
  std::string resolve_auto(std::size_t index) {
    CollSpec& spec = s_.spec(index);
    if (!spec.is_auto) return {};
    const auto candidates = coll::algorithms_for(spec.collective);
    double best = 0;
    std::optional<coll::Algorithm> pick;
    bool all = o_.measured_auto;
    for (const auto a : candidates) {
      const auto it = measured_.find({spec.collective, spec.dtype, spec.bytes, a});
      if (it == measured_.end()) {
        all = false;
        continue;
      }
      if (!pick || it->second < best) {
        best = it->second;
        pick = a;
      }
    }
    const char* how = "measured";
    if (!all || !pick) {
      pick = coll::choose_auto(spec.collective, n_, spec.bytes, s_.options().cost);
      how = "model";
    }
    spec.algorithm = *pick;
    return fmt::format("auto: {} ({})", coll::algorithm_name(*pick), how);
  }

  void report(benchmark::State& state, std::size_t index, std::uint64_t n, const Outcome& out,
              const std::string& label) {
    const CollSpec& spec = s_.specs()[index];
    double t_max = 0;
    double t_min = 1e300;
    std::uint64_t wrong = 0;
    std::uint64_t wire = 0;
    std::uint32_t differ = 0;
    for (const auto& r : out.ranks) {
      t_max = std::max(t_max, r.seconds);
      t_min = std::min(t_min, r.seconds);
      wrong += r.wrong;
      wire = std::max(wire, r.wire_bytes);
      differ += r.hash != out.ranks[0].hash ? 1 : 0;
    }
    const bool same_everywhere = spec.collective == coll::Collective::kAllReduce ||
                                 spec.collective == coll::Collective::kAllGather;
    if (!same_everywhere) differ = 0;
    const auto& sched = s_.current()->schedule();
    const double per_op = t_max / static_cast<double>(n);
    const auto logical = coll::logical_bytes(spec.collective, sched.count, coll::dtype_size(spec.dtype), n_);
    const double algbw = per_op > 0 ? static_cast<double>(logical) / per_op / 1e9 : 0;
    state.counters["time_max_us"] = per_op * 1e6;
    state.counters["time_min_us"] = t_min / static_cast<double>(n) * 1e6;
    state.counters["algbw_GBps"] = algbw;
    state.counters["busbw_GBps"] = algbw * coll::bus_factor(spec.collective, n_);
    state.counters["logical_bytes"] = static_cast<double>(logical);
    state.counters["wire_bytes"] = static_cast<double>(wire);
    state.counters["predicted_us"] = coll::predict_seconds(spec.collective, spec.algorithm, n_, logical,
                                                           s_.options().cost) *
                                     1e6;
    state.counters["ranks"] = n_;
    state.counters["wrong"] = static_cast<double>(wrong + differ);
    state.SetBytesProcessed(static_cast<std::int64_t>(logical) * static_cast<std::int64_t>(n));
    if (!label.empty()) state.SetLabel(label);
    if (!spec.is_auto) measured_[{spec.collective, spec.dtype, spec.bytes, spec.algorithm}] = per_op;
    if (wrong + differ > 0) {
      ++failures_;
      state.SkipWithError(
          fmt::format("{} wrong elements, {} rank(s) with an output unlike rank 0's", wrong, differ).c_str());
    }
  }

  Outcome run_once(std::size_t index, std::uint64_t n) {
    Outcome out;
    out.ranks.assign(n_, RankResult{});
    const CollSpec& spec = s_.specs()[index];
    const std::string algo(coll::algorithm_name(spec.algorithm));
    const std::uint64_t seq = ++seq_;
    try {
      broadcast(ctrl::Command{seq, "run", {{"spec", std::to_string(index)}, {"algo", algo}}, n}, true);
      s_.prepare(index);
      if (!collect(seq, out, s_.options().timeout, "getting ready for " + spec.name())) return abort(out);
      broadcast(ctrl::Command{++seq_, "go", {}, 0}, true);
    } catch (const std::exception& e) {
      out.ok = false;
      out.error = e.what();
      return abort(out);
    }
    Watch watch;
    watch.stall = s_.options().timeout;
    for (std::uint32_t r = 1; r < n_; ++r) watch.channels.push_back(&s_.boot().channel_to(r));
    watch.stop_on_message = false;
    watch.spin_before_yield = s_.options().spin_before_yield;
    out.ranks[0] = s_.run(n, watch);
    if (out.ranks[0].closed_channel >= 0) {
      // A rank died mid-run: name it and stop the others now, before their stall.
      const auto r = static_cast<std::uint32_t>(out.ranks[0].closed_channel + 1);
      dead_.push_back(r);
      out.error = fmt::format("{} closed its connection (died) during {}", s_.boot().describe_rank(r), spec.name());
      return abort(out);
    }
    // After a failure here, the others are failing too (or are the cause):
    // give them a short while to say so; silence then names the culprit.
    const auto wait = out.ranks[0].ok ? s_.options().timeout * 3 : std::min(s_.options().timeout, milliseconds(5000));
    const bool all = collect(seq_, out, wait, spec.name());
    if (!all || !out.ranks[0].ok ||
        std::any_of(out.ranks.begin(), out.ranks.end(), [](const auto& r) { return !r.ok; })) {
      return abort(out);
    }
    return out;
  }

  // Results of `seq` from every other rank into out.ranks, waiting on all of
  // them at once for at most `wait`; false (with out.error naming the ranks)
  // when one failed, died or stayed silent.
  bool collect(std::uint64_t seq, Outcome& out, milliseconds wait, const std::string& what) {
    std::vector<std::string> culprits;  // dead or silent: the news
    std::vector<std::string> failed;    // failed on their own (often because of a culprit)
    std::vector<std::uint32_t> pending;
    for (std::uint32_t r = 1; r < n_; ++r) {
      if (std::find(dead_.begin(), dead_.end(), r) == dead_.end()) pending.push_back(r);
    }
    const auto deadline = std::chrono::steady_clock::now() + wait;
    while (!pending.empty()) {
      std::vector<pollfd> fds;
      for (const auto r : pending) fds.push_back({s_.boot().channel_to(r).fd(), POLLIN, 0});
      const auto left = std::chrono::ceil<milliseconds>(deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0 || ::poll(fds.data(), fds.size(), static_cast<int>(left)) == 0) break;
      std::vector<std::uint32_t> still;
      for (std::size_t i = 0; i < fds.size(); ++i) {
        const std::uint32_t r = pending[i];
        if (fds[i].revents == 0) {
          still.push_back(r);
          continue;
        }
        try {
          ctrl::Message m = s_.boot().channel_to(r).recv(s_.options().timeout);
          const auto* res = std::get_if<ctrl::Result>(&m);
          if (res == nullptr || res->sequence != seq) {
            failed.push_back(fmt::format("{} answered out of turn during {}", s_.boot().describe_rank(r), what));
            continue;
          }
          out.ranks[r] = from_result(*res);
          if (!out.ranks[r].ok) failed.push_back(out.ranks[r].error);
        } catch (const ctrl::CtrlError&) {
          culprits.push_back(
              fmt::format("{} closed its connection (died) during {}", s_.boot().describe_rank(r), what));
          dead_.push_back(r);
        }
      }
      pending = std::move(still);
    }
    for (const auto r : pending) {
      culprits.push_back(fmt::format("{} did not answer within {} (stopped or hung) during {}",
                                     s_.boot().describe_rank(r), ctrl::format_duration(wait), what));
      dead_.push_back(r);
    }
    if (!out.ranks[0].ok) failed.insert(failed.begin(), "rank 0: " + out.ranks[0].error);
    if (culprits.empty() && failed.empty()) return true;
    out.ok = false;
    out.error = fmt::format("{}", fmt::join(culprits.empty() ? failed : culprits, "; "));
    return false;
  }

  Outcome abort(Outcome out) {
    out.ok = false;
    if (out.error.empty()) out.error = out.ranks[0].error;
    broken_ = true;
    broken_reason_ = out.error;
    broadcast(ctrl::Error{out.error});
    return out;
  }

  // To every live rank; `strict` rethrows a failure (before a run), else best effort.
  void broadcast(const ctrl::Message& m, bool strict = false) {
    for (std::uint32_t r = 1; r < n_; ++r) {
      if (std::find(dead_.begin(), dead_.end(), r) != dead_.end()) continue;
      try {
        s_.boot().channel_to(r).send(m, milliseconds(strict ? s_.options().timeout : milliseconds(500)));
      } catch (const ctrl::CtrlError& e) {
        dead_.push_back(r);
        if (strict) {
          throw ctrl::CtrlError(
              e.kind(), fmt::format("{} closed its connection (died): {}", s_.boot().describe_rank(r), e.what()));
        }
      }
    }
  }

  Session& s_;
  LeaderOptions o_;
  std::uint32_t n_;
  std::uint64_t seq_ = 0;
  int failures_ = 0;
  bool broken_ = false;
  std::string broken_reason_;
  std::vector<std::uint32_t> dead_;
  std::map<std::tuple<coll::Collective, coll::DType, std::uint64_t, coll::Algorithm>, double> measured_;
};

}  // namespace

int lead(Session& session, const LeaderOptions& options) { return Leader(session, options).run_all(); }

}  // namespace fabench::collbench
