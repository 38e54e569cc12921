#include "fabench/ctrl/bootstrap.hpp"

#include <poll.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "fabench/ctrl/token.hpp"

namespace fabench::ctrl {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// One launcher's pair of variables, most specific launcher first (see bootstrap.hpp).
struct LaunchSource {
  const char* rank_var;
  const char* size_var;
  const char* name;
};
constexpr LaunchSource kLaunchSources[] = {
    {"RANK", "WORLD_SIZE", "RANK/WORLD_SIZE"},
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "Open MPI (OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE)"},
    {"PMI_RANK", "PMI_SIZE", "PMI (PMI_RANK/PMI_SIZE)"},
    {"SLURM_PROCID", "SLURM_NTASKS", "Slurm (SLURM_PROCID/SLURM_NTASKS)"},
};

// A set variable with a non-empty value (an exported-but-empty variable
// counts as unset: shells and job scripts produce those).
std::optional<std::string> get(const EnvLookup& env, const std::string& name) {
  auto v = env(name);
  if (v && v->empty()) return std::nullopt;
  return v;
}

std::uint32_t parse_u32(const std::string& value, const std::string& what) {
  std::uint32_t out = 0;
  const char* first = value.data();
  const char* last = value.data() + value.size();
  const auto [ptr, ec] = std::from_chars(first, last, out);
  if (value.empty() || ec != std::errc() || ptr != last) {
    config_error(fmt::format("{}='{}' is not a non-negative integer", what, value));
  }
  return out;
}

std::uint16_t parse_port(const std::string& value, const std::string& what) {
  const auto v = parse_u32(value, what);
  if (v == 0 || v > 65535) config_error(fmt::format("{}={} is not a TCP port (1..65535)", what, v));
  return static_cast<std::uint16_t>(v);
}

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

// "rank 3", "ranks 3, 5 and 6", at most 16 named.
std::string list_ranks(const std::vector<std::uint32_t>& ranks) {
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

CtrlError with_context(const CtrlError& e, const std::string& what) {
  return CtrlError(e.kind(), fmt::format("{} during {}", e.what(), what));
}

// poll(2) until one of `fds` is ready or `deadline` passes; EINTR and early
// wakeups wait again for the time left. > 0 ready, 0 deadline passed,
// < 0 failed (errno).
int poll_until(std::vector<pollfd>& fds, Clock::time_point deadline) {
  for (;;) {
    const auto left = std::chrono::ceil<milliseconds>(deadline - Clock::now());
    const int rc = ::poll(fds.data(), fds.size(), static_cast<int>(std::max<long long>(left.count(), 0)));
    if (rc < 0 && errno == EINTR) continue;
    if (rc == 0 && Clock::now() < deadline) continue;
    return rc;
  }
}

}  // namespace

EnvLookup process_env() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

std::optional<LaunchEnv> detect_launch_env(const EnvLookup& env) {
  for (const auto& src : kLaunchSources) {
    const auto rank = get(env, src.rank_var);
    const auto size = get(env, src.size_var);
    if (!rank || !size) continue;
    LaunchEnv out;
    out.rank = parse_u32(*rank, src.rank_var);
    out.size = parse_u32(*size, src.size_var);
    out.source = src.name;
    if (out.size == 0) config_error(fmt::format("{}=0: a world needs at least one rank", src.size_var));
    if (out.rank >= out.size) {
      config_error(fmt::format("{}={} is out of range for {}={} (ranks are 0..{})", src.rank_var, out.rank,
                               src.size_var, out.size, out.size - 1));
    }
    return out;
  }
  return std::nullopt;
}

BootstrapConfig resolve_bootstrap_config(const BootstrapOptions& options, const EnvLookup& env) {
  BootstrapConfig cfg;
  const auto launch = detect_launch_env(env);
  cfg.rank = options.rank.value_or(launch ? launch->rank : 0);
  cfg.size = options.size.value_or(launch ? launch->size : 1);
  if (options.rank || options.size) {
    cfg.source = launch ? "flags over " + launch->source : "flags";
  } else {
    cfg.source = launch ? launch->source : "default (single process)";
  }
  if (cfg.size == 0) config_error(fmt::format("world size 0 (from {}): a world needs at least one rank", cfg.source));
  if (cfg.rank >= cfg.size) {
    config_error(
        fmt::format("rank {} is out of range for a world of {} ranks (from {})", cfg.rank, cfg.size, cfg.source));
  }

  if (options.master_addr) {
    if (options.master_addr->empty()) config_error("the rendezvous address (--master-addr) is empty");
    cfg.master_addr = *options.master_addr;
  } else if (auto addr = get(env, "MASTER_ADDR")) {
    cfg.master_addr = *addr;
  }

  if (options.master_port) {
    if (*options.master_port == 0) config_error("the rendezvous port (--port) must be 1..65535, not 0");
    cfg.master_port = *options.master_port;
  } else if (auto port = get(env, "MASTER_PORT")) {
    cfg.master_port = parse_port(*port, "MASTER_PORT");
  }

  if (options.timeout <= milliseconds::zero()) {
    config_error(fmt::format("the bootstrap timeout must be positive, not {} ms", options.timeout.count()));
  }
  cfg.timeout = options.timeout;
  cfg.host_name = options.host_name.empty() ? local_host_name() : options.host_name;
  cfg.token = resolve_token(options.token, options.token_file, env);
  return cfg;
}

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

void Bootstrap::rendezvous_root() {
  const auto timeout = config_.timeout;
  Listener listener = listen_on(config_.master_port);
  spdlog::debug("rank 0 waiting for {} ranks on {}", config_.size - 1, listener.address());

  const Hello mine{kProtocolVersion, std::string(build_version()), config_.host_name, 0, config_.size};
  const auto deadline = Clock::now() + timeout;
  std::uint32_t connected = 0;
  while (connected + 1 < config_.size) {
    std::vector<pollfd> fds;
    std::vector<std::uint32_t> fd_rank;
    fds.push_back({listener.fd(), POLLIN, 0});
    fd_rank.push_back(0);
    for (std::uint32_t r = 1; r < config_.size; ++r) {
      if (channels_[r]) {
        fds.push_back({channels_[r]->fd(), POLLIN, 0});
        fd_rank.push_back(r);
      }
    }
    const int rc = poll_until(fds, deadline);
    if (rc < 0) root_fail(CtrlError::Kind::kNetwork, fmt::format("rendezvous: poll: {}", std::strerror(errno)));
    if (rc == 0) {
      std::vector<std::uint32_t> missing;
      for (std::uint32_t r = 1; r < config_.size; ++r) {
        if (!channels_[r]) missing.push_back(r);
      }
      root_fail(CtrlError::Kind::kTimeout,
                fmt::format("rendezvous timed out after {}: {} of {} never connected to rank 0 ({} {})",
                            format_duration(timeout), list_ranks(missing), config_.size, config_.host_name,
                            listener.address()));
    }
    // A connected rank has nothing to say before the rendezvous completes:
    // readable means it closed (died) or misbehaved.
    for (std::size_t i = 1; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      auto& ch = channels_[fd_rank[i]];
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
    if (fds[0].revents == 0) continue;
    auto accepted = listener.accept(milliseconds(0));
    if (!accepted) continue;
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
      continue;
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
    ++connected;
  }
  listener.close();
  send_host_table();
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
    throw with_context(e, "rendezvous");
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
      throw with_context(e, "rendezvous");
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
