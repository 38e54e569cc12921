#include "fabench/ctrl/bootstrap.hpp"

#include <poll.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "bootstrap_util.hpp"

namespace fabench::ctrl {
namespace {

using detail::Clock;
using detail::list_ranks;
using detail::poll_until;
using detail::with_context;
using std::chrono::milliseconds;

std::optional<std::uint64_t> epoch_of(const Message& m) {
  if (const auto* b = std::get_if<Barrier>(&m)) return b->epoch;
  if (const auto* g = std::get_if<Gather>(&m)) return g->epoch;
  return std::nullopt;
}

std::optional<std::uint32_t> rank_of(const Message& m) {
  if (const auto* g = std::get_if<Gather>(&m)) return g->rank;
  if (const auto* e = std::get_if<EndpointExchange>(&m)) return e->rank;
  return std::nullopt;
}

// Checks that a rank's contribution `m` belongs to the step that `mine` (this
// rank's own) is part of, from rank `from`; "" when it does.
std::string mismatch(const Message& m, const Message& mine, std::uint32_t from, const std::string& what) {
  if (type_of(m) != type_of(mine)) return fmt::format("sent {} during {}", type_name(type_of(m)), what);
  if (epoch_of(m) != epoch_of(mine)) {
    return fmt::format("is at collective {} during {} (the ranks called collectives in different orders)",
                       epoch_of(m).value_or(0), what);
  }
  if (rank_of(m) && *rank_of(m) != from) return fmt::format("sent rank {}'s data during {}", *rank_of(m), what);
  return {};
}

}  // namespace

// ---------------------------------------------------------------- Bootstrap

Bootstrap::Bootstrap(BootstrapConfig config) : config_(std::move(config)) {
  hosts_.assign(config_.size, std::string());
  hosts_[config_.rank] = config_.host_name;
  channels_.resize(config_.size);
}

Bootstrap Bootstrap::connect(const BootstrapConfig& config) {
  if (config.size == 0 || config.rank >= config.size) {
    config_error(fmt::format("rank {} is out of range for a world of {} ranks", config.rank, config.size));
  }
  Bootstrap b(config);
  if (config.size == 1) return b;
  if (config.rank == 0) {
    b.rendezvous_root();
  } else {
    b.rendezvous_peer();
  }
  return b;
}

std::string Bootstrap::describe_rank(std::uint32_t rank) const {
  if (rank < hosts_.size() && !hosts_[rank].empty()) return fmt::format("rank {} ({})", rank, hosts_[rank]);
  return fmt::format("rank {}", rank);
}

Channel& Bootstrap::channel_to(std::uint32_t rank) {
  const bool allowed = config_.rank == 0 ? (rank != 0 && rank < config_.size) : rank == 0;
  if (!allowed || !channels_[rank] || !channels_[rank]->is_open()) {
    throw CtrlError(CtrlError::Kind::kProtocol,
                    fmt::format("rank {} has no control channel to rank {} (star topology: rank 0 talks to every "
                                "rank, the others only to rank 0)",
                                config_.rank, rank));
  }
  return *channels_[rank];
}

milliseconds Bootstrap::peer_wait(milliseconds timeout) const {
  // Rank 0's own wait may have started a little later than ours: give it room
  // to time out first, so the line that names the culprit arrives here.
  return timeout + timeout / 10 + milliseconds(1000);
}

void Bootstrap::root_fail(CtrlError::Kind kind, const std::string& text) {
  // Tell every rank still connected why we give up, so each of them names the
  // culprit instead of only "rank 0 closed the connection".
  for (auto& ch : channels_) {
    if (!ch || !ch->is_open()) continue;
    try {
      ch->send(Error{text}, milliseconds(1000));
    } catch (const CtrlError& e) {
      spdlog::debug("could not forward the error to {}: {}", ch->describe(), e.what());
    }
  }
  throw CtrlError(kind, text);
}

std::vector<Message> Bootstrap::exchange(Message mine, const std::string& what, milliseconds timeout, bool routed) {
  const std::uint32_t size = config_.size;
  // A barrier release and a routed piece are one message, addressed to us.
  const bool one_back = type_of(mine) == MsgType::kBarrier || routed;
  if (size == 1) {
    std::vector<Message> all(1);
    all[0] = std::move(mine);
    return all;
  }
  if (config_.rank != 0) return exchange_via_root(std::move(mine), what, timeout, one_back);
  std::vector<Message> all = gather_at_root(std::move(mine), what, timeout);
  if (routed) return fan_out_routed(all, what);
  for (std::uint32_t r = 1; r < size; ++r) {
    try {
      if (one_back) {
        channels_[r]->send(all[0], timeout);
      } else {
        for (std::uint32_t k = 0; k < size; ++k) channels_[r]->send(all[k], timeout);
      }
    } catch (const CtrlError& e) {
      channels_[r].reset();
      root_fail(e.kind(), fmt::format("{} during {}", e.what(), what));
    }
  }
  return all;
}

std::vector<Message> Bootstrap::exchange_via_root(Message mine, const std::string& what, milliseconds timeout,
                                                  bool one_back) {
  const std::uint32_t size = config_.size;
  std::vector<Message> all(size);
  Channel& root = *channels_[0];
  const std::uint32_t expected = one_back ? 1 : size;
  try {
    root.send(mine, timeout);
    for (std::uint32_t k = 0; k < expected; ++k) {
      Message m = root.recv(peer_wait(timeout));
      if (const auto* err = std::get_if<Error>(&m)) {
        throw CtrlError(CtrlError::Kind::kPeerError, fmt::format("{} reports: {}", describe_rank(0), err->text));
      }
      if (auto bad = mismatch(m, mine, one_back ? config_.rank : k, what); !bad.empty()) {
        throw CtrlError(CtrlError::Kind::kProtocol, fmt::format("{} {}", root.describe(), bad));
      }
      all[one_back ? 0 : k] = std::move(m);
    }
  } catch (const CtrlError& e) {
    if (e.kind() == CtrlError::Kind::kPeerError || e.kind() == CtrlError::Kind::kProtocol) throw;
    throw with_context(e, what);
  }
  return all;
}

// Rank 0: waits for every rank at once, so the first to die is named at once
// however slow the others are.
std::vector<Message> Bootstrap::gather_at_root(Message mine, const std::string& what, milliseconds timeout) {
  const std::uint32_t size = config_.size;
  std::vector<Message> all(size);
  all[0] = std::move(mine);
  std::vector<bool> have(size, false);
  have[0] = true;
  std::uint32_t missing = size - 1;
  const auto deadline = Clock::now() + timeout;
  while (missing > 0) {
    std::vector<pollfd> fds;
    std::vector<std::uint32_t> fd_rank;
    for (std::uint32_t r = 1; r < size; ++r) {
      if (!have[r]) {
        fds.push_back({channels_[r]->fd(), POLLIN, 0});
        fd_rank.push_back(r);
      }
    }
    const int rc = poll_until(fds, deadline);
    if (rc < 0) root_fail(CtrlError::Kind::kNetwork, fmt::format("{}: poll: {}", what, std::strerror(errno)));
    if (rc == 0) {
      std::vector<std::string> silent;
      for (const auto r : fd_rank) silent.push_back(channels_[r]->describe());
      root_fail(CtrlError::Kind::kTimeout, fmt::format("{} timed out after {}: no word from {}", what,
                                                       format_duration(timeout), fmt::join(silent, ", ")));
    }
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      const std::uint32_t r = fd_rank[i];
      Message m;
      try {
        m = channels_[r]->recv(timeout);
      } catch (const CtrlError& e) {
        channels_[r].reset();
        root_fail(e.kind(), fmt::format("{} during {}", e.what(), what));
      }
      if (const auto* err = std::get_if<Error>(&m)) {
        root_fail(CtrlError::Kind::kPeerError,
                  fmt::format("{} failed during {}: {}", channels_[r]->describe(), what, err->text));
      }
      if (auto bad = mismatch(m, all[0], r, what); !bad.empty()) {
        root_fail(CtrlError::Kind::kProtocol, fmt::format("{} {}", channels_[r]->describe(), bad));
      }
      all[r] = std::move(m);
      have[r] = true;
      --missing;
    }
  }
  return all;
}

void Bootstrap::barrier(milliseconds timeout) {
  const std::uint64_t epoch = ++epoch_;
  (void)exchange(Barrier{epoch}, fmt::format("barrier {}", epoch), timeout);
}

std::vector<std::vector<std::uint8_t>> Bootstrap::allgather(std::span<const std::uint8_t> mine, milliseconds timeout) {
  const std::uint64_t epoch = ++epoch_;
  auto all = exchange(Gather{epoch, config_.rank, std::vector<std::uint8_t>(mine.begin(), mine.end())},
                      fmt::format("allgather {}", epoch), timeout);
  std::vector<std::vector<std::uint8_t>> out;
  out.reserve(all.size());
  for (auto& m : all) out.push_back(std::move(std::get<Gather>(m).data));
  return out;
}

std::vector<std::vector<Endpoint>> Bootstrap::allgather_endpoints(std::span<const Endpoint> mine,
                                                                  milliseconds timeout) {
  const std::uint64_t epoch = ++epoch_;
  auto all = exchange(EndpointExchange{config_.rank, std::vector<Endpoint>(mine.begin(), mine.end())},
                      fmt::format("endpoint allgather {}", epoch), timeout);
  std::vector<std::vector<Endpoint>> out;
  out.reserve(all.size());
  for (auto& m : all) out.push_back(std::move(std::get<EndpointExchange>(m).endpoints));
  return out;
}

}  // namespace fabench::ctrl
