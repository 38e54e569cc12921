// fabench_bootstrap_probe: one rank of a bootstrap test. Bootstraps from flags
// or the launcher's environment, allgathers bytes and fake endpoints whose
// values it can predict for every rank, checks them, passes N barriers,
// prints one line and exits 0; otherwise prints the error and exits non-zero.
// --die-rank/--die-at and --delay-rank/--delay-ms stage failures for the
// test scripts (test/rxe/bootstrap_*.sh); --stamp DIR records when things
// happened, so the scripts can time from the event itself rather than from
// before process start-up (slow under emulation, sanitizers or gVisor).
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "fabench/ctrl/bootstrap.hpp"

namespace {

using fabench::Endpoint;

// What rank r offers: (r % 3) + 1 endpoints with values derived from r and i.
std::vector<Endpoint> fake_endpoints(std::uint32_t r) {
  std::vector<Endpoint> eps(r % 3 + 1);
  for (std::uint32_t i = 0; i < eps.size(); ++i) {
    Endpoint& ep = eps[i];
    ep.qpn = 0x1000 + r * 16 + i;
    ep.psn = (r * 7919 + i) & 0xFFFFFF;
    ep.qkey = 0x11110000U + r;
    ep.lid = static_cast<std::uint16_t>(r + 1);
    ep.port = 1;
    ep.mtu = 3;
    ep.gid_index = static_cast<std::int32_t>(r % 4);
    for (std::size_t b = 0; b < ep.gid.size(); ++b) ep.gid[b] = static_cast<std::uint8_t>(r ^ (b * 17) ^ i);
    ep.addr = 0x7f0000000000ULL + (static_cast<std::uint64_t>(r) << 20) + i * 4096;
    ep.rkey = 0xBEEF0000U | r;
    ep.length = 4096ULL * (r + 1);
  }
  return eps;
}

std::string fake_bytes(std::uint32_t r) { return fmt::format("rank {} says hello", r); }

// --stamp DIR: DIR/<rank>.<what> gets the wall clock (CLOCK_REALTIME, ms since
// the epoch, as the scripts' $EPOCHREALTIME and `date +%s%N`) at this moment.
std::string stamp_dir;

void stamp(std::uint32_t rank, const char* what) {
  if (stamp_dir.empty()) return;
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  const std::string path = fmt::format("{}/{}.{}", stamp_dir, rank, what);
  if (std::FILE* f = std::fopen(path.c_str(), "w")) {
    std::fprintf(f, "%lld\n", static_cast<long long>(ms));
    std::fclose(f);
  } else {
    std::fprintf(stderr, "fabench_bootstrap_probe: rank %u: cannot write %s\n", rank, path.c_str());
  }
}

void die_here(std::uint32_t rank, const std::string& where) {
  stamp(rank, "died");
  std::fprintf(stderr, "fabench_bootstrap_probe: rank %u: killing myself (SIGKILL) at %s\n", rank, where.c_str());
  std::fflush(stderr);
  std::raise(SIGKILL);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"fabench bootstrap probe: rendezvous, allgather and barriers, checked"};
  fabench::ctrl::BootstrapOptions opts;
  std::uint32_t rank = 0;
  std::uint32_t size = 0;
  std::string master_addr;
  std::uint16_t port = 0;
  double timeout_s = 30;
  int barriers = 3;
  std::int64_t die_rank = -1;
  std::string die_at = "start";
  std::int64_t delay_rank = -1;
  int delay_ms = 0;
  auto* rank_opt = app.add_option("--rank", rank, "this process's rank (else from the launcher's environment)");
  auto* size_opt = app.add_option("--size", size, "number of ranks (else from the launcher's environment)");
  auto* addr_opt = app.add_option("--master-addr", master_addr, "rank 0's address (else MASTER_ADDR, else 127.0.0.1)");
  auto* port_opt = app.add_option("--port", port, "rendezvous port (else MASTER_PORT, else 18516)");
  app.add_option("--timeout", timeout_s, "seconds every wait may take")->check(CLI::PositiveNumber);
  app.add_option("--barriers", barriers, "barriers to pass after the allgathers")->check(CLI::NonNegativeNumber);
  app.add_option("--die-rank", die_rank, "the rank that kills itself (SIGKILL)");
  app.add_option("--die-at", die_at, "where --die-rank dies")->check(CLI::IsMember({"start", "allgather", "barrier"}));
  app.add_option("--delay-rank", delay_rank, "the rank that starts late");
  app.add_option("--delay-ms", delay_ms, "how late --delay-rank starts");
  app.add_option("--stamp", stamp_dir,
                 "write DIR/<rank>.begin (rendezvous starts) and DIR/<rank>.died (--die-rank dies), ms since "
                 "the epoch");
  CLI11_PARSE(app, argc, argv);

  if (*rank_opt) opts.rank = rank;
  if (*size_opt) opts.size = size;
  if (*addr_opt) opts.master_addr = master_addr;
  if (*port_opt) opts.master_port = port;
  opts.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(timeout_s * 1000));

  std::uint32_t my_rank = 0;
  try {
    const auto cfg = fabench::ctrl::resolve_bootstrap_config(opts, fabench::ctrl::process_env());
    my_rank = cfg.rank;
    const bool dies = die_rank >= 0 && static_cast<std::uint32_t>(die_rank) == my_rank;
    if (dies && die_at == "start") die_here(my_rank, "start, before the rendezvous");
    if (delay_rank >= 0 && static_cast<std::uint32_t>(delay_rank) == my_rank) {
      std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    }

    stamp(my_rank, "begin");
    const auto t0 = std::chrono::steady_clock::now();
    auto boot = fabench::ctrl::Bootstrap::connect(cfg);

    if (dies && die_at == "allgather") die_here(my_rank, "the allgather");
    const std::string mine = fake_bytes(my_rank);
    const auto bytes = boot.allgather(std::span(reinterpret_cast<const std::uint8_t*>(mine.data()), mine.size()));
    const auto eps = boot.allgather_endpoints(fake_endpoints(my_rank));

    int wrong = 0;
    if (bytes.size() != cfg.size || eps.size() != cfg.size) {
      std::fprintf(stderr, "rank %u: got %zu byte strings and %zu endpoint lists for %u ranks\n", my_rank, bytes.size(),
                   eps.size(), cfg.size);
      return 2;
    }
    for (std::uint32_t r = 0; r < cfg.size; ++r) {
      if (std::string(bytes[r].begin(), bytes[r].end()) != fake_bytes(r)) {
        std::fprintf(stderr, "rank %u: wrong bytes from rank %u\n", my_rank, r);
        ++wrong;
      }
      if (eps[r] != fake_endpoints(r)) {
        std::fprintf(stderr, "rank %u: wrong endpoints from rank %u\n", my_rank, r);
        ++wrong;
      }
    }
    if (wrong > 0) return 2;

    for (int i = 0; i < barriers; ++i) {
      if (dies && die_at == "barrier" && i == barriers - 1) die_here(my_rank, "the last barrier");
      boot.barrier();
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf(
        "rank %u/%u (%s): rendezvous, allgather of %u ranks' endpoints and %d barriers ok in %.3f s "
        "[%s]\n",
        my_rank, cfg.size, cfg.host_name.c_str(), cfg.size, barriers, s, cfg.source.c_str());
    std::fflush(stdout);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fabench_bootstrap_probe: rank %u: %s\n", my_rank, e.what());
    return 1;
  }
}
