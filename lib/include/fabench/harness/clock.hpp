// The clock of the per-sample timestamps in latency loops (--clock).
//
// CLOCK_MONOTONIC is exact but not free: through the vDSO it costs tens of
// nanoseconds on a host whose clocksource is the TSC, and on a guest whose
// clocksource is not (HPET, a paravirtual clock under emulation) it is a
// system call and a device read, microseconds per sample. The TSC is read by
// one instruction. Its rate is not guessed (from cpufreq, as perftest does)
// but measured over each loop itself: SampleClock reads both clocks when the
// loop starts and when it ends, and converts the loop's tick differences to
// nanoseconds with the rate between those two readings. That is exact for a
// TSC that ticks at a constant rate across the loop, which an invariant TSC
// (CPUID 8000_0007h EDX bit 8) does whatever the core frequency and C-states,
// and that agrees across the CPUs the loop's thread may move between, which
// the kernel checked when it chose the TSC as its clocksource.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define FABENCH_HAVE_TSC 1
#else
#define FABENCH_HAVE_TSC 0
#endif

#include "fabench/harness/loop.hpp"

namespace fabench::harness {

enum class ClockSource : std::uint8_t { kMonotonic, kTsc };

// This CPU has a TSC (x86) whose rate does not change (CPUID's invariant TSC bit).
[[nodiscard]] bool tsc_invariant() noexcept;

// The kernel's clocksource (/sys/devices/system/clocksource/clocksource0):
// "tsc", "hpet", "kvm-clock", ...; "" when unreadable.
[[nodiscard]] std::string kernel_clocksource();

// The TSC can time a loop wherever its thread runs: invariant, and the
// kernel's own clocksource (so the kernel found the CPUs' TSCs in step).
[[nodiscard]] bool tsc_trusted();

// --clock: "auto" (the TSC where tsc_trusted(), else CLOCK_MONOTONIC), "tsc"
// (the TSC even where the kernel does not use it: its rate is measured over
// each loop, so it is right whenever the rate holds during the loop and the
// CPUs the thread runs on agree; a sample across CPUs that do not agree can
// come out negative, never hidden) or "monotonic". Throws UsageError for
// anything else, and for "tsc" on a CPU without one.
[[nodiscard]] ClockSource resolve_clock(std::string_view flag);

// "tsc" or "monotonic".
[[nodiscard]] std::string_view clock_name(ClockSource source) noexcept;

// Timestamps of one timed loop, in ticks of `source`: start() and stop()
// bracket the loop (each also reads CLOCK_MONOTONIC), now() is the per-sample
// read, and ns_per_tick() converts tick differences afterwards.
class SampleClock {
 public:
  explicit SampleClock(ClockSource source) noexcept : tsc_(FABENCH_HAVE_TSC && source == ClockSource::kTsc) {}

  // Hot path: one instruction with the TSC, clock_gettime otherwise.
  [[nodiscard]] std::uint64_t now() const noexcept {
#if FABENCH_HAVE_TSC
    if (tsc_) return __rdtsc();
#endif
    return now_ns();
  }
  // The first timestamp of the loop (the ticks of now()).
  [[nodiscard]] std::uint64_t start() noexcept {
    begin_ = read_pair();
    return begin_.ticks;
  }
  // The last one; from here ns_per_tick() and seconds() hold.
  [[nodiscard]] std::uint64_t stop() noexcept {
    end_ = read_pair();
    return end_.ticks;
  }
  // Nanoseconds per tick between start() and stop(): 1 for CLOCK_MONOTONIC.
  [[nodiscard]] double ns_per_tick() const noexcept {
    if (!tsc_ || end_.ticks <= begin_.ticks) return 1.0;
    return static_cast<double>(end_.ns - begin_.ns) / static_cast<double>(end_.ticks - begin_.ticks);
  }
  // CLOCK_MONOTONIC seconds from start() to stop().
  [[nodiscard]] double seconds() const noexcept { return static_cast<double>(end_.ns - begin_.ns) / 1e9; }
  [[nodiscard]] bool tsc() const noexcept { return tsc_; }

 private:
  struct Pair {
    std::uint64_t ticks = 0;
    std::uint64_t ns = 0;
  };
  // Both clocks at one moment: the TSC read on either side of clock_gettime,
  // its midpoint taken, so that the monotonic read's own cost (microseconds
  // on some guests) does not skew the rate.
  [[nodiscard]] Pair read_pair() const noexcept {
    if (!tsc_) {
      const std::uint64_t t = now_ns();
      return {t, t};
    }
    const std::uint64_t a = now();
    const std::uint64_t ns = now_ns();
    const std::uint64_t b = now();
    return {a + (b - a) / 2, ns};
  }

  bool tsc_;
  Pair begin_;
  Pair end_;
};

}  // namespace fabench::harness
