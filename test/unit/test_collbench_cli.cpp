// fabench-coll's command line, driven through CLI11 as the binary drives it: the benchmarks
// the flags ask for (names and order), the sizes, and the one-line errors for bad values and
// contradictions.
#include <catch2/catch.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "fabench/collbench/cli.hpp"
#include "fabench/harness/cli.hpp"

using fabench::harness::UsageError;
using namespace fabench::collbench;
namespace coll = fabench::coll;

namespace {

using fabench::collbench::Cli;  // not acceptbench's, which a unity build (FABENCH_FAST_BUILD) may also see

// The Cli after CLI11 parsed `args` with fabench-coll's options (a parse error fails the test).
Cli parse(const std::vector<std::string>& args) {
  CLI::App app;
  Cli c;
  add_options(app, c);
  std::vector<const char*> argv{"fabench-coll"};
  for (const auto& a : args) argv.push_back(a.c_str());
  app.parse(static_cast<int>(argv.size()), const_cast<char**>(argv.data()));
  return c;
}

std::vector<std::string> names(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (const auto& s : build_specs(parse(args))) out.push_back(s.name());
  return out;
}

// The UsageError's line, "(no error)" when build_specs accepted `args`; other exceptions
// propagate and fail the test.
std::string usage_error(const std::vector<std::string>& args) {
  try {
    (void)build_specs(parse(args));
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("collbench cli: defaults: all-reduce, ring, f32, 1K..4M by 4", "[collcli]") {
  CHECK(names({}) == std::vector<std::string>{
                         "allreduce/ring/f32/1024",
                         "allreduce/ring/f32/4096",
                         "allreduce/ring/f32/16384",
                         "allreduce/ring/f32/65536",
                         "allreduce/ring/f32/262144",
                         "allreduce/ring/f32/1048576",
                         "allreduce/ring/f32/4194304",
                     });
  const auto specs = build_specs(parse({}));
  for (const auto& s : specs) {
    CHECK(s.collective == coll::Collective::kAllReduce);
    CHECK(s.algorithm == coll::Algorithm::kRing);
    CHECK_FALSE(s.is_auto);
    CHECK(s.dtype == coll::DType::kF32);
    CHECK(s.op == coll::ReduceOp::kSum);
  }
  CHECK(specs.front().count() == 256);
  // A Cli built by hand (no command line) means the same.
  CHECK(build_specs(fabench::collbench::Cli{}).size() == 7);
}

TEST_CASE("collbench cli: sizes: -s's list as given, or -b..-e by -f", "[collcli]") {
  CHECK(buffer_sizes(parse({"-s", "4K,1M,64M"})) == std::vector<std::uint64_t>{4096, 1 << 20, 64 << 20});
  CHECK(buffer_sizes(parse({"--size", "1M,4K"})) == std::vector<std::uint64_t>{1 << 20, 4096});  // not sorted
  CHECK(buffer_sizes(parse({"-b", "1K", "-e", "1M", "-f", "32"})) == std::vector<std::uint64_t>{1024, 32768, 1 << 20});
  CHECK(buffer_sizes(parse({"-b", "1K", "-e", "100K", "-f", "8"})) == std::vector<std::uint64_t>{1024, 8192, 65536});
  CHECK(buffer_sizes(parse({"--minbytes", "64", "--maxbytes", "64"})) == std::vector<std::uint64_t>{64});
  CHECK(buffer_sizes(parse({"-e", "4K", "-f", "2"})) == std::vector<std::uint64_t>{1024, 2048, 4096});
  CHECK(names({"-s", "4K,1M"}) == std::vector<std::string>{"allreduce/ring/f32/4096", "allreduce/ring/f32/1048576"});

  CHECK(usage_error({"-b", "4M", "-e", "1K"}) == "-b 4M -e 1K: need 0 < -b <= -e");
  CHECK(usage_error({"-b", "0"}) == "-b 0 -e 4M: need 0 < -b <= -e");
  // Sizes that do not parse are usage errors naming -s.
  CHECK_THROWS_WITH(build_specs(parse({"-s", "4K,0"})), "-s 4K,0: message size 0 is not measurable");
  CHECK_THROWS_AS(build_specs(parse({"-s", "4K,0"})), fabench::harness::UsageError);
  CHECK_THROWS_WITH(build_specs(parse({"-b", "abc"})), "-b: 'abc' is not a size");
}

TEST_CASE("collbench cli: -s with -b or -e, -n with -D: contradictions", "[collcli]") {
  const std::string both = "-s and -b/-e contradict each other: a list or a range";
  CHECK(usage_error({"-s", "4K", "-b", "1K"}) == both);
  CHECK(usage_error({"-s", "4K", "-e", "4M"}) == both);
  CHECK(usage_error({"--maxbytes=4M", "--size=4K"}) == both);
  CHECK(usage_error({"-b", "1K", "-s", "4K"}) == both);  // -b at its default value still counts
  CHECK(usage_error({"-s", "4K", "-f", "2"}) == "(no error)");
  CHECK(usage_error({"-b", "1K", "-e", "4M"}) == "(no error)");
  CHECK(usage_error({"-s", "4K"}) == "(no error)");

  CHECK(usage_error({"-n", "5", "-D", "1"}) == "-n and -D contradict each other: fixed count or duration");
  CHECK(usage_error({"-n", "5"}) == "(no error)");
  CHECK(usage_error({"-D", "1"}) == "(no error)");
}

TEST_CASE("collbench cli: --algo: measured algorithms first, then auto, for each size", "[collcli]") {
  const std::vector<std::string> expected{
      "allreduce/ring/f32/4096",    "allreduce/rhd/f32/4096",    "allreduce/auto/f32/4096",
      "allreduce/ring/f32/1048576", "allreduce/rhd/f32/1048576", "allreduce/auto/f32/1048576",
  };
  CHECK(names({"--algo", "ring,rhd,auto", "-s", "4K,1M"}) == expected);
  CHECK(names({"--algo", "auto,ring,rhd", "-s", "4K,1M"}) == expected);
  CHECK(names({"--algo", "rhd,auto,ring", "-s", "4K"}) ==
        std::vector<std::string>{"allreduce/rhd/f32/4096", "allreduce/ring/f32/4096", "allreduce/auto/f32/4096"});
  CHECK(names({"--algo", "auto", "-s", "4K"}) == std::vector<std::string>{"allreduce/auto/f32/4096"});
  CHECK(names({"--algo", "oneshot", "-s", "4K"}) == std::vector<std::string>{"allreduce/oneshot/f32/4096"});

  const auto specs = build_specs(parse({"--algo", "auto,rhd", "-s", "4K"}));
  REQUIRE(specs.size() == 2);
  CHECK(specs[0].algorithm == coll::Algorithm::kRecursiveHalvingDoubling);
  CHECK_FALSE(specs[0].is_auto);
  CHECK(specs[1].is_auto);
}

TEST_CASE("collbench cli: collectives, dtypes and ops", "[collcli]") {
  CHECK(names({"--coll", "alltoall", "--a2a-algo", "allatonce", "-s", "4K"}) ==
        std::vector<std::string>{"alltoall/allatonce/f32/4096"});
  CHECK(names({"--coll", "alltoall", "-s", "4K"}) == std::vector<std::string>{"alltoall/pairwise/f32/4096"});
  CHECK(names({"--coll", "alltoall", "--a2a-algo", "allatonce,pairwise", "-s", "4K,8K"}) ==
        std::vector<std::string>{"alltoall/allatonce/f32/4096", "alltoall/pairwise/f32/4096",
                                 "alltoall/allatonce/f32/8192", "alltoall/pairwise/f32/8192"});
  // All-gather and reduce-scatter have ring only, whatever --algo says.
  CHECK(names({"--coll", "allgather,reducescatter", "--algo", "rhd,auto", "-s", "4K"}) ==
        std::vector<std::string>{"allgather/ring/f32/4096", "reducescatter/ring/f32/4096"});
  // --algo is all-reduce's, --a2a-algo all-to-all's.
  CHECK(names({"--coll", "allreduce,alltoall", "--algo", "rhd", "--a2a-algo", "allatonce", "-s", "4K"}) ==
        std::vector<std::string>{"allreduce/rhd/f32/4096", "alltoall/allatonce/f32/4096"});
  // Collective outermost, then dtype, then size.
  CHECK(names({"--coll", "allgather,allreduce", "--dtype", "bf16,f16", "-s", "4K,8K"}) ==
        std::vector<std::string>{
            "allgather/ring/bf16/4096",
            "allgather/ring/bf16/8192",
            "allgather/ring/f16/4096",
            "allgather/ring/f16/8192",
            "allreduce/ring/bf16/4096",
            "allreduce/ring/bf16/8192",
            "allreduce/ring/f16/4096",
            "allreduce/ring/f16/8192",
        });
  const auto specs = build_specs(parse({"--dtype", "bf16", "--op", "max", "-s", "4K"}));
  REQUIRE(specs.size() == 1);
  CHECK(specs[0].dtype == coll::DType::kBF16);
  CHECK(specs[0].op == coll::ReduceOp::kMax);
  CHECK(specs[0].count() == 2048);
  CHECK(build_specs(parse({"--op", "min", "-s", "4K"}))[0].op == coll::ReduceOp::kMin);
}

TEST_CASE("collbench cli: bad values: one UsageError line each", "[collcli]") {
  CHECK(usage_error({"--algo", "foo"}) == "--algo foo: 'foo' is not an algorithm of allreduce");
  CHECK(usage_error({"--algo", "ring,pairwise"}) ==
        "--algo ring,pairwise: 'pairwise' is not an algorithm of allreduce");
  CHECK(usage_error({"--algo", "Ring"}) == "--algo Ring: 'Ring' is not an algorithm of allreduce");
  CHECK(usage_error({"--coll", "foo"}) ==
        "--coll foo: unknown value 'foo' (allreduce, allgather, reducescatter, alltoall)");
  CHECK(usage_error({"--coll", "allreduce,"}) ==
        "--coll allreduce,: unknown value '' (allreduce, allgather, reducescatter, alltoall)");
  CHECK(usage_error({"--dtype", "f64"}) == "--dtype f64: unknown value 'f64' (f32 (fp32), bf16, f16 (fp16))");
  CHECK(usage_error({"--op", "avg"}) == "--op avg: expected sum, min or max");
  CHECK(usage_error({"--coll", "alltoall", "--a2a-algo", "ring"}) ==
        "--a2a-algo ring: 'ring' is not an algorithm of alltoall");
  CHECK(usage_error({"--coll", "alltoall", "--a2a-algo", "auto"}) ==
        "--a2a-algo auto: 'auto' is not an algorithm of alltoall");
  CHECK(usage_error({"--coll", "allreduce", "--algo", "allatonce"}) ==
        "--algo allatonce: 'allatonce' is not an algorithm of allreduce");
}

TEST_CASE("collbench cli: -u/--qp-timeout: 20 unless given, 0..31 (docs/cli.md)", "[collcli]") {
  CHECK(parse({}).ranks.qp_timeout == 20);
  CHECK(parse({"-u", "14"}).ranks.qp_timeout == 14);
  CHECK(parse({"--qp-timeout", "31"}).ranks.qp_timeout == 31);
  CHECK(parse({"-u", "0"}).ranks.qp_timeout == 0);
  CHECK_THROWS_AS(parse({"-u", "32"}), CLI::ValidationError);
}
