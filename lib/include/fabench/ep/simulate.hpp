// Dispatch and combine of every rank in one process, through the same Exchange code a run uses
// and with every byte checked: the unit tests' proof of the protocol and of --plan's counts at
// sizes no test bed reaches (1024 ranks).
#pragma once

#include <cstdint>

#include "fabench/ep/plan.hpp"

namespace fabench::ep {

struct SimResult {
  std::uint64_t copies = 0;         // dispatch copies received, all ranks
  std::uint64_t bad_copies = 0;     // that failed their check
  std::uint64_t tokens = 0;         // combined outputs checked
  std::uint64_t bad_tokens = 0;     // that differ from the exact weighted sum
  std::uint64_t dispatch_sent = 0;  // bytes written to other ranks (low-latency headers included)
  std::uint64_t combine_sent = 0;
  std::uint64_t dispatch_wrs = 0;   // as a run posts them, all ranks
  std::uint64_t combine_wrs = 0;
};

[[nodiscard]] SimResult simulate(const EpConfig& c, const Router& router);

}  // namespace fabench::ep
