// lib/accept's time bound: (1 + retests) x rounds x (setup + the longer of pair time and timeout).
#include <catch2/catch.hpp>

#include <cmath>

#include "fabench/accept/budget.hpp"
#include "fabench/accept/error.hpp"
#include "fabench/accept/schedule.hpp"

using namespace fabench::accept;

TEST_CASE("accept: the run's upper bound and its one-line description", "[accept]") {
  TimeSettings t;
  t.rounds = round_robin(1024).rounds.size();
  t.pair_s = 8;
  t.pair_timeout_s = 10;
  t.round_setup_s = 2;
  t.retests = 1;
  CHECK(run_upper_bound_s(t) == 2.0 * 1023 * 12);
  CHECK(describe_upper_bound(t) == "at most 6.8 h: (1 + 1 retests) x 1023 rounds x (2 s setup + 10 s per pair)");

  t = TimeSettings{};
  t.rounds = 3;
  t.pair_s = 12.5;  // no watchdog limit given: the pair's own time bounds it
  t.retests = 0;
  CHECK(run_upper_bound_s(t) == 37.5);
  CHECK(describe_upper_bound(t) == "at most 37.5 s: (1 + 0 retests) x 3 rounds x (0 s setup + 12.5 s per pair)");
  t.round_setup_s = 0.5;
  t.rounds = 99;
  t.retests = 2;
  CHECK(run_upper_bound_s(t) == 3.0 * 99 * 13);
  CHECK(describe_upper_bound(t).starts_with("at most 64.4 min:"));

  t.pair_timeout_s = -1;
  CHECK_THROWS_WITH(run_upper_bound_s(t),
                    "time bound: pair_timeout_s must be a finite number of seconds >= 0 (got -1)");
  t.pair_timeout_s = 0;
  t.round_setup_s = NAN;
  CHECK_THROWS_AS(describe_upper_bound(t), AcceptError);
}
