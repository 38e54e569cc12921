// The upper bound on a whole fabench-accept run, printed before it starts so that an operator
// knows how long the fabric is busy at worst. Rounds run one after the other; a round ends when
// its slowest pair ends, and a pair is cut off by the watchdog at pair_timeout_s. Worst case every
// pair is bad every time, so each of the `retests` waves is as long as the first
// (retest_schedule() never packs a wave into more rounds than the schedule has):
//
//   bound = (1 + retests) x rounds x (round_setup_s + max(pair_s, pair_timeout_s))
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace fabench::accept {

struct TimeSettings {
  std::size_t rounds = 0;     // of the schedule
  double pair_s = 0;          // measuring one pair: every test of it, both directions
  double pair_timeout_s = 0;  // the watchdog's limit on one pair; 0: pair_s is the limit
  double round_setup_s = 0;   // the limit on a round's connection setup (rendezvous, QP exchange)
  std::uint32_t retests = 0;
};

// Throws AcceptError for a negative or non-finite time.
[[nodiscard]] double run_upper_bound_s(const TimeSettings& t);
// "at most 6.8 h: (1 + 1 retests) x 1023 rounds x (2 s setup + 10 s per pair)"
[[nodiscard]] std::string describe_upper_bound(const TimeSettings& t);

}  // namespace fabench::accept
