// The launch environment and the Bootstrap's configuration: which launcher
// started this process (its rank and size variables), the rendezvous address,
// port, timeout and token, flags over environment (bootstrap.hpp).
#include "fabench/ctrl/bootstrap.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>

#include "fabench/ctrl/token.hpp"

namespace fabench::ctrl {
namespace {

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

}  // namespace fabench::ctrl
