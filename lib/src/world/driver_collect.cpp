// Leader::collect: the one gather of the session protocol (driver.hpp).
#include <poll.h>

#include <algorithm>
#include <mutex>
#include <variant>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "driver_util.hpp"
#include "fabench/world/driver.hpp"

namespace fabench::world {

using std::chrono::milliseconds;

// Results of `seq` from every other rank into out.ranks, waiting on all of
// them at once for at most `wait`; false (with out.error naming the ranks)
// when one failed, died or stayed silent, unless keep_going: then such a rank
// is lost (named in its report) and the others are waited for still. An
// EndpointExchange before a rank's result is its offer (offers_). `live`: the
// ranks send Keepalives meanwhile (from "go" to their result), so one that sent
// nothing at all for --timeout is stopped or cut off: named at once.
bool Leader::collect(std::uint64_t seq, Outcome& out, milliseconds wait, const std::string& what, bool live) {
  using Clock = std::chrono::steady_clock;
  std::vector<std::string> culprits;  // dead or silent: the news
  std::vector<std::string> failed;    // failed on their own (often because of a culprit)
  std::vector<std::uint32_t> pending;
  for (std::uint32_t r = 1; r < n_; ++r) {
    if (!dead(r)) pending.push_back(r);
  }
  const auto deadline = Clock::now() + wait;
  while (!pending.empty() && (culprits.empty() || o_.keep_going)) {
    std::vector<pollfd> fds;
    for (const auto r : pending) fds.push_back({boot_.channel_to(r).fd(), POLLIN, 0});
    // Past the deadline, one last look: an answer already there is taken.
    const auto left = std::chrono::ceil<milliseconds>(deadline - Clock::now()).count();
    const bool last = left <= 0;
    // Live: wake at least every 100 ms to look for a rank fallen silent.
    const auto slice = last ? 0 : live ? std::min<std::int64_t>(left, 100) : left;
    if (::poll(fds.data(), fds.size(), static_cast<int>(slice)) == 0 && (last || !live)) break;
    std::vector<std::uint32_t> still;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      const std::uint32_t r = pending[i];
      ctrl::Channel& ch = boot_.channel_to(r);
      // Keepalives are taken here; a result (or a hang-up) is left for recv().
      if (fds[i].revents != 0 && ch.poll_incoming() != ctrl::Channel::Incoming::kNothing) {
        if (!take(r, seq, out, what, culprits, failed)) still.push_back(r);
        continue;
      }
      if (live && ch.silent_for(o_.timeout)) {
        lose(r,
             fmt::format("{} sent nothing for {} (stopped or unreachable) during {}", boot_.describe_rank(r),
                         ctrl::format_duration(o_.timeout), what),
             out, culprits);
        continue;
      }
      still.push_back(r);
    }
    pending = std::move(still);
    if (last) break;
  }
  return settle(out, pending, wait, live, culprits, failed, what);
}

// The next message of rank r: true when r is done with this gather (answered,
// failed or died), false when it only offered its endpoints.
bool Leader::take(std::uint32_t r, std::uint64_t seq, Outcome& out, const std::string& what,
                  std::vector<std::string>& culprits, std::vector<std::string>& failed) {
  try {
    ctrl::Message m = boot_.channel_to(r).recv(o_.timeout);
    if (auto* offer = std::get_if<ctrl::EndpointExchange>(&m)) {
      offers_[r] = std::move(offer->endpoints);
      return false;
    }
    const auto* res = std::get_if<ctrl::Result>(&m);
    if (res == nullptr || res->sequence != seq) {
      failed.push_back(fmt::format("{} answered out of turn during {}", boot_.describe_rank(r), what));
      if (o_.keep_going) lose(r, failed.back(), out, culprits);
      return true;
    }
    out.ranks[r] = detail::from_result(*res);
    if (!out.ranks[r].ok) failed.push_back(out.ranks[r].error);
  } catch (const ctrl::CtrlError&) {
    lose(r, fmt::format("{} closed its connection (died) during {}", boot_.describe_rank(r), what), out, culprits);
  }
  return true;
}

// Rank r died, fell silent or did not answer: the news of this gather, and
// (keep_going) left out of later runs, its report saying why.
void Leader::lose(std::uint32_t r, std::string why, Outcome& out, std::vector<std::string>& culprits) {
  dead_.push_back(r);
  lost_[r] = why;
  out.ranks[r] = RankReport{false, why, {}, {}, -1, true};
  if (o_.keep_going) {
    // Told so, in case it lives on (a failed set-up, an answer that came too late).
    try {
      const std::lock_guard lock(send_mutex_);
      boot_.channel_to(r).send(ctrl::Error{why}, milliseconds(500));
    } catch (const ctrl::CtrlError&) {
      // gone already
    }
  }
  culprits.push_back(std::move(why));
}

// The ranks still pending when the gather ended, and its verdict.
bool Leader::settle(Outcome& out, const std::vector<std::uint32_t>& pending, milliseconds wait, bool live,
                    std::vector<std::string>& culprits, std::vector<std::string>& failed, const std::string& what) {
  if (culprits.empty() || o_.keep_going) {
    for (const auto r : pending) {
      if (!out.ranks[0].ok && live && !o_.keep_going) {
        // Rank 0 failed first and waited only briefly: a rank still heard from (its Keepalives;
        // the silent ones are culprits above) is busy, not the cause. Rank 0's error leads, and
        // abort() tells this rank to stop.
        failed.push_back(
            fmt::format("{} was still running {} later", boot_.describe_rank(r), ctrl::format_duration(wait)));
        continue;
      }
      lose(r,
           fmt::format("{} did not answer within {} (stopped or hung) during {}", boot_.describe_rank(r),
                       ctrl::format_duration(wait), what),
           out, culprits);
    }
  }
  if (o_.keep_going) {
    // Before "go", a rank that failed its part cannot run: lost too. Only rank
    // 0's own failure stops the session.
    for (std::uint32_t r = 1; r < n_ && !live; ++r) {
      if (!out.ranks[r].ok && !out.ranks[r].lost) lose(r, out.ranks[r].error, out, culprits);
    }
    return out.ranks[0].ok;
  }
  if (!out.ranks[0].ok) failed.insert(failed.begin(), "rank 0: " + out.ranks[0].error);
  if (culprits.empty() && failed.empty()) return true;
  out.ok = false;
  out.error = fmt::format("{}", fmt::join(culprits.empty() ? failed : culprits, "; "));
  return false;
}

}  // namespace fabench::world
