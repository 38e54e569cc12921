// harness::SampleClock and --clock: the TSC's rate as measured over a loop
// converts a stretch inside that loop to the nanoseconds CLOCK_MONOTONIC saw;
// the invariant-TSC test agrees with the kernel's; the flag's values.
#include <CLI/CLI.hpp>
#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>

#include "fabench/harness/cli.hpp"
#include "fabench/harness/clock.hpp"
#include "fabench/harness/samples.hpp"
#include "fabench/pair/options.hpp"
#include "pair_support.hpp"

using fabench::harness::ClockSource;
using fabench::harness::now_ns;
using fabench::harness::resolve_clock;
using fabench::harness::SampleClock;
using fabench::harness::tsc_invariant;
using fabench::harness::UsageError;

namespace {

#if FABENCH_HAVE_TSC
// The "flags" line of /proc/cpuinfo's first CPU, padded with spaces (x86's TSC flags).
std::string cpu_flags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) == 0) return " " + line.substr(line.find(':') + 1) + " ";
  }
  return {};
}
#endif

}  // namespace

TEST_CASE("the clock flag: auto, tsc and monotonic, one line for anything else", "[clock]") {
  CHECK(resolve_clock("monotonic") == ClockSource::kMonotonic);
  CHECK(resolve_clock("auto") == (fabench::harness::tsc_trusted() ? ClockSource::kTsc : ClockSource::kMonotonic));
#if FABENCH_HAVE_TSC
  CHECK(resolve_clock("tsc") == ClockSource::kTsc);
#else
  CHECK_THROWS_AS(resolve_clock("tsc"), UsageError);
#endif
  CHECK_THROWS_WITH(resolve_clock("rdtsc"), "--clock rdtsc: expected auto, tsc or monotonic");
  CHECK_THROWS_AS(resolve_clock(""), UsageError);
  CHECK(fabench::harness::clock_name(ClockSource::kTsc) == "tsc");
  CHECK(fabench::harness::clock_name(ClockSource::kMonotonic) == "monotonic");
}

TEST_CASE("fabench-lat takes --clock, checked with the other flags; fabench-bw does not", "[clock]") {
  using fabench::pair::Kind;
  auto o = fabench::test::parse(Kind::kLatency, {"--clock", "monotonic"});
  CHECK(o.clock == "monotonic");
  CHECK_NOTHROW(fabench::pair::check_contradictions(o));
  CHECK(fabench::test::parse(Kind::kLatency, {}).clock == "auto");
  o = fabench::test::parse(Kind::kLatency, {"--clock", "hpet"});
  CHECK_THROWS_WITH(fabench::pair::check_contradictions(o), "--clock hpet: expected auto, tsc or monotonic");
  CHECK_THROWS_AS(fabench::test::parse(Kind::kBandwidth, {"--clock", "tsc"}), CLI::ParseError);
}

TEST_CASE("the invariant-TSC bit agrees with the kernel's nonstop_tsc flag", "[clock]") {
#if FABENCH_HAVE_TSC
  const std::string flags = cpu_flags();
  if (flags.empty()) {
    std::cout << "SKIPPED: no /proc/cpuinfo flags line" << std::endl;
    return;
  }
  // Linux sets nonstop_tsc from CPUID 8000_0007h EDX bit 8, the bit tsc_invariant() reads.
  CHECK(tsc_invariant() == (flags.find(" nonstop_tsc ") != std::string::npos));
  // Trusted: invariant and the kernel's clocksource.
  const std::string source = fabench::harness::kernel_clocksource();
  INFO("clocksource " << source);
  CHECK(fabench::harness::tsc_trusted() == (tsc_invariant() && source == "tsc"));
#else
  CHECK_FALSE(tsc_invariant());
#endif
}

TEST_CASE("SampleClock: CLOCK_MONOTONIC ticks are nanoseconds", "[clock]") {
  SampleClock clock(ClockSource::kMonotonic);
  CHECK_FALSE(clock.tsc());
  const std::uint64_t t0 = clock.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const std::uint64_t t1 = clock.now();
  const std::uint64_t t2 = clock.stop();
  CHECK(clock.ns_per_tick() == 1.0);
  CHECK(t1 - t0 >= 20'000'000U);
  CHECK(clock.seconds() == Approx(static_cast<double>(t2 - t0) / 1e9));
}

TEST_CASE("SampleClock: a stretch inside the loop, in TSC ticks, converts to what CLOCK_MONOTONIC saw", "[clock]") {
#if FABENCH_HAVE_TSC
  SampleClock clock(ClockSource::kTsc);
  REQUIRE(clock.tsc());
  (void)clock.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  // The stretch: monotonic reads just outside it, TSC reads just inside.
  const std::uint64_t m1 = now_ns();
  const std::uint64_t a = clock.now();
  std::this_thread::sleep_for(std::chrono::milliseconds(40));
  const std::uint64_t b = clock.now();
  const std::uint64_t m2 = now_ns();
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  (void)clock.stop();
  REQUIRE(b > a);
  const double measured_ns = static_cast<double>(b - a) * clock.ns_per_tick();
  INFO("TSC stretch " << measured_ns << " ns, monotonic around it " << (m2 - m1) << " ns, " << 1.0 / clock.ns_per_tick()
                      << " ticks/ns");
  CHECK(measured_ns >= 40e6 * 0.995);
  CHECK(measured_ns <= static_cast<double>(m2 - m1) * 1.005);
  CHECK(clock.seconds() >= 0.06);
#else
  std::cout << "SKIPPED: no TSC on this architecture (x86 only)" << std::endl;
#endif
}

TEST_CASE("SampleClock: an empty loop converts at 1, never divides by zero", "[clock]") {
  SampleClock clock(ClockSource::kTsc);
  CHECK(clock.ns_per_tick() == 1.0);  // before stop(): no rate yet
}

TEST_CASE("Samples::scale converts every recorded sample, and only those", "[clock]") {
  fabench::harness::Samples s(4);
  REQUIRE(s.record(10));
  REQUIRE(s.record(30));
  s.scale(0.5);
  REQUIRE(s.size() == 2);
  CHECK(s.values()[0] == 5);
  CHECK(s.values()[1] == 15);
  REQUIRE(s.record(8));
  s.scale(1.0);
  CHECK(s.values()[2] == 8);
  CHECK(s.stats().max == 15);
}
