// What every N-rank binary does the same way before its benchmarks: the rank
// flags (--rank, --world-size, --master-addr, --master-port, --spin,
// --print-all, --token, --token-file), the rendezvous, the device of each
// rank from a -d list, the check that every rank runs the same benchmarks,
// and the run's context.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "fabench/ctrl/bootstrap.hpp"
#include "fabench/harness/cli.hpp"
#include "fabench/harness/context.hpp"
#include "fabench/world/world.hpp"

namespace fabench::world {

struct RankFlags {
  std::optional<std::uint32_t> rank;
  std::optional<std::uint32_t> size;
  std::optional<std::string> master_addr;
  std::optional<std::uint16_t> master_port;
  std::optional<std::uint32_t> spin;
  bool print_all = false;
  std::uint32_t qp_timeout = kDefaultQpTimeout;  // -u
  std::optional<std::string> token;              // else --token-file, else FABENCH_TOKEN (ctrl/token.hpp)
  std::optional<std::string> token_file;
};
void add_rank_flags(CLI::App& app, RankFlags& flags);

// The rendezvous: flags first, then the launcher's environment (mpirun, srun,
// fabench-launch), then one rank on 127.0.0.1.
[[nodiscard]] ctrl::Bootstrap connect_ranks(const RankFlags& flags, std::chrono::milliseconds timeout);
// "-d rxe0,rxe1": rank r takes entry r mod the list's length.
[[nodiscard]] harness::ContextOptions context_for_rank(const harness::DeviceFlags& dev, std::uint32_t rank);
// Every rank must run the same benchmarks in the same order: `names` differs
// from rank 0's -> UsageError naming the rank.
void require_same_benchmarks(ctrl::Bootstrap& boot, const std::string& names);
// --spin, else: 0 (yield at every empty poll) when this host has more ranks
// than cores, else spin.
[[nodiscard]] std::uint32_t spin_before_yield(const RankFlags& flags, const ctrl::Bootstrap& boot);
// "WHAT needs 2 ranks, but 1 was launched (mpirun -np 2, srun -n 2 or fabench-launch -n 2)".
[[nodiscard]] std::string rank_count_mismatch(const std::string& what, std::uint32_t needed, std::uint32_t launched);
// ranks, launcher, hosts, spin_before_yield and qp_timeout in Google Benchmark's context.
void add_world_context(const ctrl::Bootstrap& boot, std::uint32_t spin, std::uint32_t qp_timeout);

}  // namespace fabench::world
