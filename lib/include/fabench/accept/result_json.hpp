// Attempt and PairResult as JSON, and back: what a rank sends rank 0 about its half of a pair
// (fabench-accept), and what a saved run can be judged again from. The fields and units are those
// of report_json's attempts (result.hpp's names; NaN, not measured, as null), so one reader takes
// both. Reading is strict: an unknown status, a missing or mistyped field, a negative counter
// count or QP count is one AcceptError line naming `origin` and the field.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "fabench/accept/result.hpp"

namespace fabench::accept {

// A measured value, or null when it is NaN (not measured).
[[nodiscard]] nlohmann::json number_or_null(double v);
[[nodiscard]] nlohmann::json attempt_to_json(const Attempt& a);
[[nodiscard]] Attempt attempt_from_json(const nlohmann::json& j, std::string_view origin);
[[nodiscard]] nlohmann::json pair_result_to_json(const PairResult& p);
[[nodiscard]] PairResult pair_result_from_json(const nlohmann::json& j, std::string_view origin);

}  // namespace fabench::accept
