// Rank and size from launcher environments, their precedence, and flags over
// environment over defaults.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "ctrl_support.hpp"
#include "fabench/ctrl/bootstrap.hpp"

using namespace fabench::ctrl;

namespace {

using fabench::test::env_of;

CtrlError config_error_of(const EnvLookup& env, const BootstrapOptions& opts = {}) {
  try {
    (void)resolve_bootstrap_config(opts, env);
  } catch (const CtrlError& e) {
    return e;
  }
  FAIL("no CtrlError thrown");
  return CtrlError(CtrlError::Kind::kProtocol, "unreachable");
}

}  // namespace

TEST_CASE("each launcher's variables are recognized", "[ctrl][env]") {
  struct Case {
    std::map<std::string, std::string> vars;
    std::uint32_t rank;
    std::uint32_t size;
    std::string source;
  };
  const Case cases[] = {
      {{{"RANK", "3"}, {"WORLD_SIZE", "8"}}, 3, 8, "RANK/WORLD_SIZE"},
      {{{"OMPI_COMM_WORLD_RANK", "5"}, {"OMPI_COMM_WORLD_SIZE", "6"}}, 5, 6, "Open MPI"},
      {{{"PMI_RANK", "0"}, {"PMI_SIZE", "2"}}, 0, 2, "PMI"},
      {{{"SLURM_PROCID", "15"}, {"SLURM_NTASKS", "16"}}, 15, 16, "Slurm"},
  };
  for (const auto& c : cases) {
    INFO(c.source);
    const auto got = detect_launch_env(env_of(c.vars));
    REQUIRE(got.has_value());
    CHECK(got->rank == c.rank);
    CHECK(got->size == c.size);
    CHECK_THAT(got->source, Catch::StartsWith(c.source));
  }
  CHECK_FALSE(detect_launch_env(env_of({})).has_value());
}

TEST_CASE("the innermost launcher wins", "[ctrl][env]") {
  const std::map<std::string, std::string> slurm = {{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}};
  const std::map<std::string, std::string> pmi = {{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}};
  const std::map<std::string, std::string> ompi = {{"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_SIZE", "3"}};
  const std::map<std::string, std::string> torch = {{"RANK", "3"}, {"WORLD_SIZE", "4"}};
  auto merge = [](std::initializer_list<std::map<std::string, std::string>> parts) {
    std::map<std::string, std::string> out;
    for (const auto& p : parts) out.insert(p.begin(), p.end());
    return out;
  };
  // mpirun inside a Slurm batch script: every rank inherits SLURM_PROCID=0.
  CHECK(detect_launch_env(env_of(merge({slurm, ompi})))->rank == 2);
  CHECK(detect_launch_env(env_of(merge({slurm, pmi})))->rank == 1);
  CHECK(detect_launch_env(env_of(merge({pmi, ompi})))->rank == 2);
  CHECK(detect_launch_env(env_of(merge({slurm, pmi, ompi, torch})))->rank == 3);
  CHECK(detect_launch_env(env_of(merge({slurm, pmi, ompi, torch})))->size == 4);
  CHECK(detect_launch_env(env_of(merge({slurm, torch})))->source == "RANK/WORLD_SIZE");
}

TEST_CASE("half a launcher's pair, or an empty value, does not count", "[ctrl][env]") {
  // RANK alone is a common unrelated variable; it must not hide Slurm.
  const auto got = detect_launch_env(env_of({{"RANK", "1"}, {"SLURM_PROCID", "2"}, {"SLURM_NTASKS", "4"}}));
  REQUIRE(got.has_value());
  CHECK(got->rank == 2);
  CHECK_THAT(got->source, Catch::StartsWith("Slurm"));
  CHECK_FALSE(detect_launch_env(env_of({{"WORLD_SIZE", "4"}})).has_value());
  CHECK_FALSE(detect_launch_env(env_of({{"RANK", ""}, {"WORLD_SIZE", ""}})).has_value());
}

TEST_CASE("bad launcher values are one clear line naming the variable", "[ctrl][env]") {
  CHECK_THROWS_WITH(detect_launch_env(env_of({{"OMPI_COMM_WORLD_RANK", "two"}, {"OMPI_COMM_WORLD_SIZE", "4"}})),
                    "OMPI_COMM_WORLD_RANK='two' is not a non-negative integer");
  CHECK_THROWS_WITH(detect_launch_env(env_of({{"RANK", "-1"}, {"WORLD_SIZE", "4"}})),
                    "RANK='-1' is not a non-negative integer");
  CHECK_THROWS_WITH(detect_launch_env(env_of({{"RANK", "1x"}, {"WORLD_SIZE", "4"}})),
                    "RANK='1x' is not a non-negative integer");
  CHECK_THROWS_WITH(detect_launch_env(env_of({{"RANK", "99999999999"}, {"WORLD_SIZE", "4"}})),
                    Catch::Contains("is not a non-negative integer"));
  CHECK_THROWS_WITH(detect_launch_env(env_of({{"SLURM_PROCID", "4"}, {"SLURM_NTASKS", "4"}})),
                    "SLURM_PROCID=4 is out of range for SLURM_NTASKS=4 (ranks are 0..3)");
  CHECK_THROWS_WITH(detect_launch_env(env_of({{"PMI_RANK", "0"}, {"PMI_SIZE", "0"}})),
                    "PMI_SIZE=0: a world needs at least one rank");
}

TEST_CASE("bootstrap config: flags over environment over defaults", "[ctrl][env]") {
  SECTION("nothing set: a single process at the default rendezvous") {
    const auto cfg = resolve_bootstrap_config({}, env_of({}));
    CHECK(cfg.rank == 0);
    CHECK(cfg.size == 1);
    CHECK(cfg.master_addr == "127.0.0.1");
    CHECK(cfg.master_port == kDefaultRendezvousPort);
    CHECK(cfg.timeout == kDefaultTimeout);
    CHECK_FALSE(cfg.host_name.empty());
    CHECK(cfg.source == "default (single process)");
  }
  SECTION("environment") {
    const auto cfg = resolve_bootstrap_config(
        {}, env_of({{"RANK", "2"}, {"WORLD_SIZE", "4"}, {"MASTER_ADDR", "node-a"}, {"MASTER_PORT", "29500"}}));
    CHECK(cfg.rank == 2);
    CHECK(cfg.size == 4);
    CHECK(cfg.master_addr == "node-a");
    CHECK(cfg.master_port == 29500);
    CHECK(cfg.source == "RANK/WORLD_SIZE");
  }
  SECTION("flags win, field by field") {
    BootstrapOptions opts;
    opts.rank = 1;
    opts.master_port = 20000;
    opts.host_name = "me";
    opts.timeout = std::chrono::milliseconds(1500);
    const auto cfg = resolve_bootstrap_config(opts, env_of({{"OMPI_COMM_WORLD_RANK", "3"},
                                                            {"OMPI_COMM_WORLD_SIZE", "4"},
                                                            {"MASTER_ADDR", "node-a"},
                                                            {"MASTER_PORT", "29500"}}));
    CHECK(cfg.rank == 1);
    CHECK(cfg.size == 4);  // from Open MPI
    CHECK(cfg.master_addr == "node-a");
    CHECK(cfg.master_port == 20000);
    CHECK(cfg.host_name == "me");
    CHECK(cfg.timeout == std::chrono::milliseconds(1500));
    CHECK_THAT(cfg.source, Catch::StartsWith("flags over Open MPI"));
  }
  SECTION("bad values") {
    CHECK(std::string(config_error_of(env_of({{"MASTER_PORT", "70000"}})).what()) ==
          "MASTER_PORT=70000 is not a TCP port (1..65535)");
    CHECK(std::string(config_error_of(env_of({{"MASTER_PORT", "http"}})).what()) ==
          "MASTER_PORT='http' is not a non-negative integer");
    BootstrapOptions opts;
    opts.rank = 4;
    opts.size = 4;
    const auto e = config_error_of(env_of({}), opts);
    CHECK(e.kind() == CtrlError::Kind::kConfig);
    CHECK(std::string(e.what()) == "rank 4 is out of range for a world of 4 ranks (from flags)");
    BootstrapOptions zero;
    zero.timeout = std::chrono::milliseconds(0);
    CHECK_THROWS_WITH(resolve_bootstrap_config(zero, env_of({})), Catch::Contains("timeout must be positive"));
    BootstrapOptions port0;
    port0.master_port = 0;
    CHECK_THROWS_WITH(resolve_bootstrap_config(port0, env_of({})), Catch::Contains("not 0"));
  }
}
