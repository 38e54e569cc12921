// Conversions between a rank's RankReport and the ctrl::Result that carries it (driver.hpp).
#pragma once

#include "fabench/ctrl/wire.hpp"
#include "fabench/world/driver.hpp"

namespace fabench::world::detail {

inline RankReport from_result(const ctrl::Result& r) {
  RankReport out;
  out.ok = r.status == ctrl::ResultStatus::kOk;
  out.error = r.error;
  out.record = r.record;
  out.json = r.json;
  return out;
}

inline ctrl::Result to_result(std::uint64_t seq, const RankReport& r) {
  ctrl::Result out;
  out.sequence = seq;
  out.status = r.ok ? ctrl::ResultStatus::kOk : ctrl::ResultStatus::kFailed;
  out.error = r.error;
  out.record = r.record;
  out.json = r.json;
  return out;
}

}  // namespace fabench::world::detail
