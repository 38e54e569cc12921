// The upper bound on a run's time (budget.hpp has the formula).
#include "fabench/accept/budget.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "detail.hpp"
#include "fabench/accept/error.hpp"

namespace fabench::accept {

namespace {

void check_time(std::string_view field, double s) {
  if (!std::isfinite(s) || s < 0)
    throw AcceptError(fmt::format("time bound: {} must be a finite number of seconds >= 0 (got {})", field, s));
}

// 45 s, 12.5 min, 6.8 h.
std::string human(double s) {
  if (s < 120) return fmt::format("{} s", detail::num(s));
  if (s < 7200) return fmt::format("{} min", detail::num(std::round(s / 6) / 10));
  return fmt::format("{} h", detail::num(std::round(s / 360) / 10));
}

}  // namespace

double run_upper_bound_s(const TimeSettings& t) {
  check_time("pair_s", t.pair_s);
  check_time("pair_timeout_s", t.pair_timeout_s);
  check_time("round_setup_s", t.round_setup_s);
  const double per_round = t.round_setup_s + std::max(t.pair_s, t.pair_timeout_s);
  return (1.0 + t.retests) * static_cast<double>(t.rounds) * per_round;
}

std::string describe_upper_bound(const TimeSettings& t) {
  const double bound = run_upper_bound_s(t);
  return fmt::format("at most {}: (1 + {} retests) x {} rounds x ({} s setup + {} s per pair)", human(bound), t.retests,
                     t.rounds, detail::num(t.round_setup_s), detail::num(std::max(t.pair_s, t.pair_timeout_s)));
}

}  // namespace fabench::accept
