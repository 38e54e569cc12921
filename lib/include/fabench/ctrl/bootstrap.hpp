// Bootstrap: who am I (rank, size), where is everyone, and the three
// collectives a benchmark needs before and between runs (rendezvous, barrier,
// allgather). No MPI library: rank and size come from flags or from whatever
// launcher started us (Slurm, Open MPI, PMI, torchrun-style RANK/WORLD_SIZE,
// tools/fabench-launch), and the ranks meet over TCP in a star around rank 0.
//
// Every wait has a timeout. Rank 0 sees every rank, so it names the one that
// died or never came ("rank 3 (host-b 10.0.0.2:41234) closed the connection
// during barrier 2") and forwards that line to the survivors before it gives
// up; the other ranks name rank 0 when it is rank 0 that is gone.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fabench/base/endpoint.hpp"
#include "fabench/ctrl/channel.hpp"
#include "fabench/ctrl/error.hpp"
#include "fabench/ctrl/wire.hpp"

namespace fabench::ctrl {

// 18515 is perftest's (and fabench's pair server's) port; the rendezvous sits next to it.
inline constexpr std::uint16_t kDefaultRendezvousPort = 18516;
inline constexpr const char* kDefaultMasterAddr = "127.0.0.1";

// Looks up one environment variable (std::nullopt when unset). Tests pass a
// map-backed lookup; programs pass process_env().
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;
[[nodiscard]] EnvLookup process_env();

struct LaunchEnv {
  std::uint32_t rank = 0;
  std::uint32_t size = 1;
  std::string source;  // e.g. "Slurm (SLURM_PROCID/SLURM_NTASKS)"
};

// Rank and size as set by a launcher; std::nullopt when none did. A launcher
// counts only when both of its variables are set. When several did, the
// innermost wins, which is the most specific first:
//   RANK/WORLD_SIZE (torchrun, fabench-launch) > Open MPI > PMI (MPICH,
//   Intel MPI) > Slurm,
// because an mpirun or torchrun started inside a Slurm allocation inherits
// SLURM_PROCID of the batch step (the same value in every rank).
// Throws CtrlError kConfig for a value that is not a number or a rank >= size.
[[nodiscard]] std::optional<LaunchEnv> detect_launch_env(const EnvLookup& env);

// What the command line said; unset fields come from the environment, then defaults.
struct BootstrapOptions {
  std::optional<std::uint32_t> rank;
  std::optional<std::uint32_t> size;
  std::optional<std::string> master_addr;    // else MASTER_ADDR, else 127.0.0.1
  std::optional<std::uint16_t> master_port;  // else MASTER_PORT, else kDefaultRendezvousPort
  std::chrono::milliseconds timeout = kDefaultTimeout;
  std::string host_name;                  // empty: gethostname()
  std::optional<std::string> token;       // --token, else --token-file, else FABENCH_TOKEN (token.hpp)
  std::optional<std::string> token_file;  // --token-file
};

struct BootstrapConfig {
  std::uint32_t rank = 0;
  std::uint32_t size = 1;
  std::string master_addr = kDefaultMasterAddr;
  std::uint16_t master_port = kDefaultRendezvousPort;
  std::chrono::milliseconds timeout = kDefaultTimeout;
  std::string host_name;
  std::string source;  // where rank and size came from, for logs
  std::string token;   // shared secret every rank must hold (token.hpp); empty: none
};

// Flags over environment over defaults; pure (all input through `env`, and
// the token file when one is named). Throws CtrlError kConfig for a bad
// value, naming the flag or variable.
[[nodiscard]] BootstrapConfig resolve_bootstrap_config(const BootstrapOptions& options, const EnvLookup& env);

class Bootstrap {
 public:
  // Rendezvous: rank 0 listens on every interface at master_port, the others
  // connect to master_addr:master_port (retrying while rank 0 is not up yet).
  // With a token, rank 0 drops (and logs) every connection that does not
  // prove it, so a stray connection cannot join the world; a rank whose
  // token differs fails with "token mismatch".
  // Returns once all `size` ranks have said Hello; throws CtrlError naming
  // the ranks missing when the timeout passes first. size 1 opens no socket.
  [[nodiscard]] static Bootstrap connect(const BootstrapConfig& config);

  Bootstrap(Bootstrap&&) noexcept = default;
  Bootstrap& operator=(Bootstrap&&) noexcept = default;
  Bootstrap(const Bootstrap&) = delete;
  Bootstrap& operator=(const Bootstrap&) = delete;
  ~Bootstrap() = default;

  [[nodiscard]] std::uint32_t rank() const noexcept { return config_.rank; }
  [[nodiscard]] std::uint32_t size() const noexcept { return config_.size; }
  [[nodiscard]] const BootstrapConfig& config() const noexcept { return config_; }
  // Host name of every rank (exchanged during the rendezvous).
  [[nodiscard]] const std::vector<std::string>& hosts() const noexcept { return hosts_; }
  // "rank 3 (host-b)"
  [[nodiscard]] std::string describe_rank(std::uint32_t rank) const;

  // Returns when every rank has entered the barrier.
  void barrier() { barrier(config_.timeout); }
  void barrier(std::chrono::milliseconds timeout);

  // Every rank's bytes, indexed by rank (ours included).
  [[nodiscard]] std::vector<std::vector<std::uint8_t>> allgather(std::span<const std::uint8_t> mine) {
    return allgather(mine, config_.timeout);
  }
  [[nodiscard]] std::vector<std::vector<std::uint8_t>> allgather(std::span<const std::uint8_t> mine,
                                                                 std::chrono::milliseconds timeout);
  // Every rank's endpoints, indexed by rank (ours included).
  [[nodiscard]] std::vector<std::vector<Endpoint>> allgather_endpoints(std::span<const Endpoint> mine) {
    return allgather_endpoints(mine, config_.timeout);
  }
  [[nodiscard]] std::vector<std::vector<Endpoint>> allgather_endpoints(std::span<const Endpoint> mine,
                                                                       std::chrono::milliseconds timeout);

  // Point to point through rank 0: `outgoing[j]` (empty: nothing) goes to
  // rank j only; returns, by source rank, what each rank sent to us. Rank 0
  // forwards each piece once, so the bytes it moves are what the ranks send
  // (O(edges)), not every rank's list to every rank (O(N^2) lists) as
  // allgather would. outgoing.size() must equal size().
  [[nodiscard]] std::vector<std::vector<std::uint8_t>> route(const std::vector<std::vector<std::uint8_t>>& outgoing) {
    return route(outgoing, config_.timeout);
  }
  [[nodiscard]] std::vector<std::vector<std::uint8_t>> route(const std::vector<std::vector<std::uint8_t>>& outgoing,
                                                             std::chrono::milliseconds timeout);

  // The control channel to `rank`: rank 0 has one to every rank, the others
  // only to rank 0. For the leader/follower command loop.
  [[nodiscard]] Channel& channel_to(std::uint32_t rank);

 private:
  explicit Bootstrap(BootstrapConfig config);
  void rendezvous_root();
  [[noreturn]] void rendezvous_timed_out(const Listener& listener);
  [[noreturn]] void reject_early_frame(std::uint32_t rank);
  // Accepts one connection and checks its Hello; true when a rank joined.
  bool admit(Listener& listener, const Hello& mine, std::chrono::steady_clock::time_point deadline);
  // What is wrong with a rank's Hello at the rendezvous; "" when nothing.
  [[nodiscard]] std::string hello_problem(const Hello& theirs, const Channel& ch) const;
  void send_host_table();
  void rendezvous_peer();
  // One collective step through rank 0: every rank contributes `mine`; each
  // returns all contributions by rank. `what` names the step in errors.
  // `routed`: rank 0 sends each rank one Gather addressed to it (route()),
  // instead of every contribution to every rank.
  std::vector<Message> exchange(Message mine, const std::string& what, std::chrono::milliseconds timeout,
                                bool routed = false);
  // A rank other than 0: sends `mine`, receives one message (`one_back`) or one per rank.
  std::vector<Message> exchange_via_root(Message mine, const std::string& what, std::chrono::milliseconds timeout,
                                         bool one_back);
  // Rank 0: every rank's contribution, by rank, `mine` first.
  std::vector<Message> gather_at_root(Message mine, const std::string& what, std::chrono::milliseconds timeout);
  [[nodiscard]] std::vector<Message> fan_out_routed(std::vector<Message>& all, const std::string& what);
  [[noreturn]] void root_fail(CtrlError::Kind kind, const std::string& text);
  [[nodiscard]] std::chrono::milliseconds peer_wait(std::chrono::milliseconds timeout) const;

  BootstrapConfig config_;
  std::vector<std::string> hosts_;
  std::vector<std::optional<Channel>> channels_;  // by rank; rank 0: all others, others: [0] only
  std::uint64_t epoch_ = 0;                       // collectives so far (0: the rendezvous)
};

}  // namespace fabench::ctrl
