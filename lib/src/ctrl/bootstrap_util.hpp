// Helpers shared by the Bootstrap's rendezvous (rendezvous.cpp) and its
// collectives (bootstrap.cpp). Internal to lib/ctrl.
#pragma once

#include <poll.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "fabench/ctrl/error.hpp"

namespace fabench::ctrl::detail {

using Clock = std::chrono::steady_clock;

// "rank 3", "ranks 3, 5 and 6", at most 16 named.
inline std::string list_ranks(const std::vector<std::uint32_t>& ranks) {
  if (ranks.size() == 1) return fmt::format("rank {}", ranks[0]);
  std::string s = "ranks ";
  const std::size_t shown = std::min<std::size_t>(ranks.size(), 16);
  for (std::size_t i = 0; i < shown; ++i) {
    if (i > 0) s += (i + 1 == ranks.size()) ? " and " : ", ";
    s += std::to_string(ranks[i]);
  }
  if (shown < ranks.size()) s += fmt::format(" and {} more", ranks.size() - shown);
  return s;
}

inline CtrlError with_context(const CtrlError& e, const std::string& what) {
  return CtrlError(e.kind(), fmt::format("{} during {}", e.what(), what));
}

// poll(2) until one of `fds` is ready or `deadline` passes; EINTR and early
// wakeups wait again for the time left. > 0 ready, 0 deadline passed,
// < 0 failed (errno).
inline int poll_until(std::vector<pollfd>& fds, Clock::time_point deadline) {
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    const int rc = ::poll(fds.data(), fds.size(), static_cast<int>(std::max<long long>(left.count(), 0)));
    if (rc < 0 && errno == EINTR) continue;
    if (rc == 0 && Clock::now() < deadline) continue;
    return rc;
  }
}

}  // namespace fabench::ctrl::detail
