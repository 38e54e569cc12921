// The --pairs file of fabench-accept (accept/schedule.hpp): load_pairs() of any file, against
// five node names, returns pairs or throws AcceptError whose one line names the file; pairs it
// returns are in range, never a self-pair, never twice (either order), and pack_rounds() puts
// each in exactly one round with no node twice in a round.
#include <set>
#include <string>
#include <vector>

#include "fabench/accept/error.hpp"
#include "fabench/accept/schedule.hpp"
#include "fuzz_common.hpp"

using namespace fabench;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = fuzz::as_file(data, size);
  static const std::vector<std::string> names{"h0", "h1", "node-2", "", "h4"};
  std::vector<accept::Pair> pairs;
  try {
    pairs = accept::load_pairs(path, names);
  } catch (const accept::AcceptError& e) {
    const std::string_view what = e.what();
    FUZZ_CHECK(what.starts_with(path + ":"));
    FUZZ_CHECK(what.find('\n') == std::string_view::npos);
    return 0;
  }
  FUZZ_CHECK(!pairs.empty());
  std::set<std::pair<std::uint32_t, std::uint32_t>> seen;
  for (const auto& p : pairs) {
    FUZZ_CHECK(p.a < names.size() && p.b < names.size() && p.a != p.b);
    FUZZ_CHECK(seen.insert({std::min(p.a, p.b), std::max(p.a, p.b)}).second);
  }
  const accept::Schedule s = accept::pack_rounds(static_cast<std::uint32_t>(names.size()), pairs);
  FUZZ_CHECK(s.pair_count() == pairs.size());
  for (const auto& round : s.rounds) {
    std::set<std::uint32_t> busy;
    for (const auto& p : round) FUZZ_CHECK(busy.insert(p.a).second && busy.insert(p.b).second);
  }
  return 0;
}
