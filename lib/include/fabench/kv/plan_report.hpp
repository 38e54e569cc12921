// --plan: the derived shape (bytes per token, page, layer, request, rank pool) and, for each
// layout x merge at the spec's fragmentation, TP, direction and max SGE, the WR counts and the
// predicted transfer time and rate (plan.hpp's model), as a text table and as JSON with the same
// facts. G = 1e9 throughout; times and WR counts are for the whole batch, per request figures
// divide by the batch.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "fabench/kv/layout.hpp"

namespace fabench::kv {

[[nodiscard]] std::string plan_table(const KvSpec& s, double link_bytes_per_s, double per_wr_seconds);
[[nodiscard]] nlohmann::json plan_json(const KvSpec& s, double link_bytes_per_s, double per_wr_seconds);

}  // namespace fabench::kv
