// A job's per-rank result and the RankReport that carries it to rank 0, for any result type R
// with `ok`, `error`, `closed_channel`, `to_record()` and `static R from_record(const Record&)`.
#pragma once

#include "fabench/ctrl/record.hpp"
#include "fabench/world/driver.hpp"

namespace fabench::world {

template <typename R>
[[nodiscard]] RankReport report_of(const R& result) {
  RankReport out;
  out.ok = result.ok;
  out.error = result.error;
  out.closed_channel = result.closed_channel;
  out.record = result.to_record();
  return out;
}

// A failed rank may have sent no numbers (zeros then); a record that does not read makes an ok
// rank a failed one whose error names the field.
template <typename R>
[[nodiscard]] R result_of(const RankReport& report) {
  R out;
  try {
    out = R::from_record(report.record);
  } catch (const ctrl::RecordError& e) {
    out = R{};
    if (report.ok) {
      out.ok = false;
      out.error = e.what();
      out.closed_channel = report.closed_channel;
      return out;
    }
  }
  out.ok = report.ok;
  out.error = report.error;
  out.closed_channel = report.closed_channel;
  return out;
}

}  // namespace fabench::world
