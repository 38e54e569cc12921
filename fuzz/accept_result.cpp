// What a rank sends rank 0 about its half of a pair (accept/result_json.hpp): any JSON text
// either fails to parse, or attempt_from_json() throws AcceptError (one line naming the origin),
// or it returns an attempt that survives attempt_to_json -> attempt_from_json unchanged.
#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "fabench/accept/error.hpp"
#include "fabench/accept/result_json.hpp"
#include "fuzz_common.hpp"

using namespace fabench;

namespace {

bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, false);
  if (j.is_discarded()) return 0;
  accept::Attempt a;
  try {
    a = accept::attempt_from_json(j, "rank 7");
  } catch (const accept::AcceptError& e) {
    const std::string_view what = e.what();
    FUZZ_CHECK(what.starts_with("rank 7: "));
    FUZZ_CHECK(what.find('\n') == std::string_view::npos);
    return 0;
  }
  const accept::Attempt b = accept::attempt_from_json(accept::attempt_to_json(a), "round trip");
  FUZZ_CHECK(a.status == b.status && a.reason == b.reason && a.qps == b.qps && a.duration_s == b.duration_s);
  FUZZ_CHECK(same(a.bw_a_to_b_gbps, b.bw_a_to_b_gbps) && same(a.bw_b_to_a_gbps, b.bw_b_to_a_gbps) &&
             same(a.bw_bidir_gbps, b.bw_bidir_gbps) && same(a.lat_p50_us, b.lat_p50_us) &&
             same(a.lat_p99_us, b.lat_p99_us) && same(a.lat_max_us, b.lat_max_us));
  FUZZ_CHECK(a.lanes_a_to_b_gbps == b.lanes_a_to_b_gbps && a.lanes_b_to_a_gbps == b.lanes_b_to_a_gbps);
  FUZZ_CHECK(a.counters_a == b.counters_a && a.counters_b == b.counters_b);
  return 0;
}
