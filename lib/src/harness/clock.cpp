#include "fabench/harness/clock.hpp"

#include <fstream>

#include <fmt/format.h>

#if FABENCH_HAVE_TSC
#include <cpuid.h>
#endif

#include "fabench/harness/cli.hpp"

namespace fabench::harness {

bool tsc_invariant() noexcept {
#if FABENCH_HAVE_TSC
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (static_cast<unsigned>(__get_cpuid_max(0x80000000U, nullptr)) < 0x80000007U) return false;
  if (__get_cpuid(0x80000007U, &eax, &ebx, &ecx, &edx) == 0) return false;
  return (edx & (1U << 8)) != 0;
#else
  return false;
#endif
}

std::string kernel_clocksource() {
  std::ifstream in("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string name;
  in >> name;
  return name;
}

bool tsc_trusted() { return tsc_invariant() && kernel_clocksource() == "tsc"; }

ClockSource resolve_clock(std::string_view flag) {
  if (flag == "monotonic") return ClockSource::kMonotonic;
  if (flag == "auto") return tsc_trusted() ? ClockSource::kTsc : ClockSource::kMonotonic;
  if (flag == "tsc") {
    if (!FABENCH_HAVE_TSC) throw UsageError("--clock tsc: this CPU has no time-stamp counter (x86 only)");
    return ClockSource::kTsc;
  }
  throw UsageError(fmt::format("--clock {}: expected auto, tsc or monotonic", flag));
}

std::string_view clock_name(ClockSource source) noexcept { return source == ClockSource::kTsc ? "tsc" : "monotonic"; }

}  // namespace fabench::harness
