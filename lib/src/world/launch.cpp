#include "fabench/world/launch.hpp"

#include <algorithm>
#include <span>
#include <thread>

#include <CLI/CLI.hpp>
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace fabench::world {

void add_rank_flags(CLI::App& app, RankFlags& f) {
  app.add_option("--rank", f.rank, "This rank (default: from the launcher's environment)")
      ->check(harness::whole_number("--rank", 0, 65535));
  app.add_option("--world-size", f.size, "Number of ranks (default: from the launcher's environment)")
      ->check(harness::whole_number("--world-size", 1, 65536));
  app.add_option("--master-addr", f.master_addr, "Rank 0's address (default MASTER_ADDR, else 127.0.0.1)")
      ->type_name("ADDR");
  app.add_option("--master-port", f.master_port, "Rank 0's rendezvous port (default MASTER_PORT, else 18516)")
      ->check(harness::whole_number("--master-port", 1, 65535));
  app.add_option("--spin", f.spin,
                 "Empty CQ polls before a rank yields the CPU (default: 0 when this host has more ranks than cores, "
                 "else spin)")
      ->check(harness::whole_number("--spin", 0, 2147483647));
  app.add_flag("--print-all", f.print_all, "Every rank logs (default: rank 0 only)");
  app.add_option("-u,--qp-timeout", f.qp_timeout,
                 "RC ACK timeout 4.096 us x 2^N, 0-31 (0: none; default 20 = 4.3 s, as NCCL_IB_TIMEOUT)")
      ->check(harness::whole_number("-u", 0, 31));
  app.add_option("--token", f.token,
                 "Shared secret every rank must prove at the rendezvous (visible in ps: prefer --token-file or "
                 "FABENCH_TOKEN)");
  app.add_option("--token-file", f.token_file, "Read the shared secret from FILE (default: FABENCH_TOKEN)")
      ->type_name("FILE");
}

ctrl::Bootstrap connect_ranks(const RankFlags& f, std::chrono::milliseconds timeout) {
  ctrl::BootstrapOptions bo;
  bo.rank = f.rank;
  bo.size = f.size;
  bo.master_addr = f.master_addr;
  bo.master_port = f.master_port;
  bo.timeout = timeout;
  bo.token = f.token;
  bo.token_file = f.token_file;
  return ctrl::Bootstrap::connect(ctrl::resolve_bootstrap_config(bo, ctrl::process_env()));
}

harness::ContextOptions context_for_rank(const harness::DeviceFlags& dev, std::uint32_t rank) {
  auto o = dev.context_options();
  const auto list = harness::split_list(o.device);
  if (list.size() > 1) o.device = list[rank % list.size()];
  return o;
}

void require_same_benchmarks(ctrl::Bootstrap& boot, const std::string& names) {
  const auto all = boot.allgather(std::span(reinterpret_cast<const std::uint8_t*>(names.data()), names.size()));
  for (std::uint32_t r = 0; r < boot.size(); ++r) {
    if (all[r] != all[0]) {
      throw harness::UsageError(
          fmt::format("{} was started with other benchmark flags than rank 0", boot.describe_rank(r)));
    }
  }
}

std::uint32_t spin_before_yield(const RankFlags& f, const ctrl::Bootstrap& boot) {
  if (f.spin) return *f.spin;
  const auto& hosts = boot.hosts();
  const auto here = static_cast<unsigned>(std::count(hosts.begin(), hosts.end(), hosts[boot.rank()]));
  const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
  return here > cores ? 0U : 1'000'000U;
}

std::string rank_count_mismatch(const std::string& what, std::uint32_t needed, std::uint32_t launched) {
  return fmt::format("{} need{} {} rank{}, but {} {} launched (mpirun -np {}, srun -n {} or fabench-launch -n {})",
                     what, what.find(" and ") == std::string::npos ? "s" : "", needed, needed == 1 ? "" : "s",
                     launched, launched == 1 ? "was" : "were", needed, needed, needed);
}

void add_world_context(const ctrl::Bootstrap& boot, std::uint32_t spin, std::uint32_t qp_timeout) {
  benchmark::AddCustomContext("ranks", std::to_string(boot.size()));
  benchmark::AddCustomContext("launcher", boot.config().source);
  benchmark::AddCustomContext("hosts", fmt::format("{}", fmt::join(boot.hosts(), ",")));
  benchmark::AddCustomContext("spin_before_yield", std::to_string(spin));
  benchmark::AddCustomContext("qp_timeout", std::to_string(qp_timeout));
}

}  // namespace fabench::world
