// The Bootstrap's rendezvous: rank 0 listens and admits every rank (Hello,
// token, rank and size checked), then sends every rank the host table; the
// others connect to rank 0 and wait for that table (bootstrap.hpp).
#include "fabench/ctrl/bootstrap.hpp"

#include <poll.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "bootstrap_util.hpp"

namespace fabench::ctrl {
namespace {

using detail::Clock;
using std::chrono::milliseconds;

// Rank 0's rendezvous socket on `port`, with advice when the port is taken.
Listener listen_on(std::uint16_t port) {
  try {
    return Listener::bind("", port);
  } catch (const CtrlError& e) {
    throw CtrlError(e.kind(), fmt::format("rank 0 cannot host the rendezvous: {}; choose another port with "
                                          "--master-port or MASTER_PORT",
                                          e.what()));
  }
}

}  // namespace

void Bootstrap::rendezvous_root() {
  Listener listener = listen_on(config_.master_port);
  spdlog::debug("rank 0 waiting for {} ranks on {}", config_.size - 1, listener.address());
  const Hello mine{kProtocolVersion, std::string(build_version()), config_.host_name, 0, config_.size};
  const auto deadline = Clock::now() + config_.timeout;
  std::uint32_t connected = 0;
  while (connected + 1 < config_.size) {
    std::vector<pollfd> fds{{listener.fd(), POLLIN, 0}};
    std::vector<std::uint32_t> fd_rank{0};
    for (std::uint32_t r = 1; r < config_.size; ++r) {
      if (!channels_[r]) continue;
      fds.push_back({channels_[r]->fd(), POLLIN, 0});
      fd_rank.push_back(r);
    }
    const int rc = detail::poll_until(fds, deadline);
    if (rc < 0) root_fail(CtrlError::Kind::kNetwork, fmt::format("rendezvous: poll: {}", std::strerror(errno)));
    if (rc == 0) rendezvous_timed_out(listener);
    for (std::size_t i = 1; i < fds.size(); ++i) {
      if (fds[i].revents != 0) reject_early_frame(fd_rank[i]);
    }
    if (fds[0].revents != 0 && admit(listener, mine, deadline)) ++connected;
  }
  listener.close();
  send_host_table();
}

void Bootstrap::rendezvous_timed_out(const Listener& listener) {
  std::vector<std::uint32_t> missing;
  for (std::uint32_t r = 1; r < config_.size; ++r) {
    if (!channels_[r]) missing.push_back(r);
  }
  root_fail(CtrlError::Kind::kTimeout,
            fmt::format("rendezvous timed out after {}: {} of {} never connected to rank 0 ({} {})",
                        format_duration(config_.timeout), detail::list_ranks(missing), config_.size, config_.host_name,
                        listener.address()));
}

// A connected rank has nothing to say before the rendezvous completes:
// readable means it closed (died) or misbehaved.
void Bootstrap::reject_early_frame(std::uint32_t rank) {
  auto& ch = channels_[rank];
  Message m;
  try {
    m = ch->recv(milliseconds(1000));
  } catch (const CtrlError& e) {
    ch.reset();
    root_fail(e.kind(), fmt::format("{} during rendezvous", e.what()));
  }
  root_fail(CtrlError::Kind::kProtocol,
            fmt::format("{} sent {} before the rendezvous completed", ch->describe(), type_name(type_of(m))));
}

bool Bootstrap::admit(Listener& listener, const Hello& mine, std::chrono::steady_clock::time_point deadline) {
  auto accepted = listener.accept(milliseconds(0));
  if (!accepted) return false;
  Channel& ch = *accepted;
  Hello theirs;
  try {
    theirs = ch.exchange_hello(
        mine,
        std::clamp(std::chrono::ceil<milliseconds>(deadline - Clock::now()), milliseconds(100), milliseconds(5000)),
        Credentials{config_.token, true});
  } catch (const CtrlError& e) {
    if (e.kind() == CtrlError::Kind::kVersion) root_fail(e.kind(), e.what());
    // Not one of ours (a port scanner, a stale client, another token): drop it and wait on.
    spdlog::warn("rendezvous: ignoring a connection from {}: {}", ch.peer_address(), e.what());
    return false;
  }
  if (const std::string problem = hello_problem(theirs, ch); !problem.empty()) {
    try {
      ch.send(Error{problem}, milliseconds(1000));
    } catch (const CtrlError&) {  // it is told if it can be; the others are told by root_fail
    }
    root_fail(CtrlError::Kind::kConfig, problem);
  }
  hosts_[theirs.rank] = theirs.host_name;
  channels_[theirs.rank] = std::move(accepted);
  return true;
}

std::string Bootstrap::hello_problem(const Hello& theirs, const Channel& ch) const {
  if (theirs.size != config_.size) {
    return fmt::format(
        "{} believes the world has {} ranks, rank 0 has {}; were all ranks started by the "
        "same launcher?",
        ch.describe(), theirs.size, config_.size);
  }
  if (theirs.rank == 0 || theirs.rank >= config_.size) {
    return fmt::format("{} claims rank {}, but rank 0 is this process ({}) and the world has ranks 0..{}",
                       ch.describe(), theirs.rank, config_.host_name, config_.size - 1);
  }
  if (channels_[theirs.rank]) {
    return fmt::format("two processes claim rank {}: {} and {}", theirs.rank, channels_[theirs.rank]->describe(),
                       ch.describe());
  }
  return {};
}

// The rendezvous is complete: every rank gets the host table, so all ranks can name all others.
void Bootstrap::send_host_table() {
  for (std::uint32_t r = 1; r < config_.size; ++r) {
    try {
      for (std::uint32_t k = 0; k < config_.size; ++k) {
        channels_[r]->send(Gather{0, k, std::vector<std::uint8_t>(hosts_[k].begin(), hosts_[k].end())},
                           config_.timeout);
      }
    } catch (const CtrlError& e) {
      channels_[r].reset();
      root_fail(e.kind(), fmt::format("{} during rendezvous", e.what()));
    }
  }
}

void Bootstrap::rendezvous_peer() {
  const auto timeout = config_.timeout;
  Channel ch = [&] {
    try {
      return Channel::connect(config_.master_addr, config_.master_port, timeout);
    } catch (const CtrlError& e) {
      throw CtrlError(e.kind(), fmt::format("rank {} cannot reach rank 0 for the rendezvous: {} (is rank 0 "
                                            "running, and do --master-addr/MASTER_ADDR and --port/MASTER_PORT "
                                            "name it?)",
                                            config_.rank, e.what()));
    }
  }();
  ch.set_peer(0, "");
  const Hello mine{kProtocolVersion, std::string(build_version()), config_.host_name, config_.rank, config_.size};
  Hello theirs;
  try {
    theirs = ch.exchange_hello(mine, timeout, Credentials{config_.token, false});
  } catch (const CtrlError& e) {
    if (e.kind() == CtrlError::Kind::kVersion || e.kind() == CtrlError::Kind::kAuth) throw;
    throw detail::with_context(e, "rendezvous");
  }
  if (theirs.rank != 0 || theirs.size != config_.size) {
    config_error(
        fmt::format("{} says it is rank {} of {}, but this rank {} expected rank 0 of {}; is "
                    "--master-addr/--master-port pointing at another job?",
                    ch.describe(), theirs.rank, theirs.size, config_.rank, config_.size));
  }
  hosts_[0] = theirs.host_name;
  channels_[0] = std::move(ch);
  Channel& root = *channels_[0];
  // Rank 0 answers when every rank has arrived, with every rank's host name.
  for (std::uint32_t k = 0; k < config_.size; ++k) {
    Message m;
    try {
      m = root.recv(peer_wait(timeout));
    } catch (const CtrlError& e) {
      throw detail::with_context(e, "rendezvous");
    }
    if (const auto* err = std::get_if<Error>(&m)) {
      throw CtrlError(CtrlError::Kind::kPeerError, fmt::format("{} reports: {}", describe_rank(0), err->text));
    }
    const auto* g = std::get_if<Gather>(&m);
    if (g == nullptr || g->epoch != 0 || g->rank != k) {
      throw CtrlError(CtrlError::Kind::kProtocol,
                      fmt::format("{} sent {} where the rendezvous host table (entry {}) was expected", root.describe(),
                                  type_name(type_of(m)), k));
    }
    hosts_[k] = std::string(g->data.begin(), g->data.end());
  }
}

}  // namespace fabench::ctrl
