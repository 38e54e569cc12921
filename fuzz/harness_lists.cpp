// The command-line parsers of sizes, lists and numbers (harness/cli.hpp) and
// fabench-coll's list items (coll names), against independent oracles:
//   split_list       joined back with its separator gives the text again;
//   parse_integer<T> agrees across integer widths;
//   parse_bytes      equals digits x unit computed in 128 bits, and throws
//                    std::invalid_argument exactly when that is not a size
//                    or exceeds 64 bits (the overflow branch);
//   parse_sizes      is parse_bytes of each item, 0 refused (a UsageError naming -s);
//   whole_number     accepts exactly the integers of its range;
//   check_path_mtu   accepts exactly 0 and the five path MTUs;
//   coll names       parse back from the name of what they parse to.
// Input: byte 0 picks the list separator and a range; the rest is the text.
#include <algorithm>
#include <limits>
#include <stdexcept>

#include <CLI/CLI.hpp>

#include "fabench/coll/reduce.hpp"
#include "fabench/coll/schedule.hpp"
#include "fabench/harness/cli.hpp"
#include "fuzz_common.hpp"

using namespace fabench;
using harness::parse_integer;

namespace {

// parse_bytes as documented, in 128 bits: nullopt when it must throw.
std::optional<std::uint64_t> bytes_oracle(const std::string& t) {
  std::size_t i = 0;
  while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
  if (i == 0) return std::nullopt;
  unsigned __int128 v = 0;
  for (std::size_t k = 0; k < i; ++k) {
    v = v * 10 + static_cast<unsigned>(t[k] - '0');
    if (v > std::numeric_limits<std::uint64_t>::max()) return std::nullopt;
  }
  const std::string_view unit = std::string_view(t).substr(i);
  unsigned shift = 0;
  if (unit.empty() || unit == "B") shift = 0;
  else if (unit == "K" || unit == "k" || unit == "KiB") shift = 10;
  else if (unit == "M" || unit == "MiB") shift = 20;
  else if (unit == "G" || unit == "GiB") shift = 30;
  else return std::nullopt;
  v <<= shift;
  if (v > std::numeric_limits<std::uint64_t>::max()) return std::nullopt;
  return static_cast<std::uint64_t>(v);
}

template <std::integral Narrow, std::integral Wide>
void widths_agree(std::string_view t) {
  const auto n = parse_integer<Narrow>(t);
  const auto w = parse_integer<Wide>(t);
  if (n) FUZZ_CHECK(w && *w == static_cast<Wide>(*n));
  if (w && *w >= std::numeric_limits<Narrow>::min() && *w <= std::numeric_limits<Narrow>::max()) {
    FUZZ_CHECK(n && static_cast<Wide>(*n) == *w);
  }
}

template <typename T, typename Parse, typename Name>
void name_round_trip(std::string_view t, Parse parse, Name name) {
  if (const std::optional<T> v = parse(t)) {
    FUZZ_CHECK(name(*v) == t);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const char sep = ",:;/"[data[0] % 4];
  const std::string t = fuzz::text(data + 1, size - 1);

  const auto parts = harness::split_list(t, sep);
  std::string joined;
  for (std::size_t i = 0; i < parts.size(); ++i) joined += (i ? std::string(1, sep) : "") + parts[i];
  FUZZ_CHECK(joined == t);
  FUZZ_CHECK(parts.size() == static_cast<std::size_t>(std::count(t.begin(), t.end(), sep)) + 1);

  widths_agree<std::int8_t, std::int64_t>(t);
  widths_agree<std::int32_t, std::int64_t>(t);
  widths_agree<std::uint8_t, std::uint64_t>(t);
  widths_agree<std::uint32_t, std::uint64_t>(t);
  if (const auto u = parse_integer<std::uint64_t>(t)) {
    FUZZ_CHECK(parse_integer<std::int64_t>(t).has_value() == (*u <= std::numeric_limits<std::int64_t>::max()));
  }

  const auto want = bytes_oracle(t);
  try {
    const std::uint64_t got = harness::parse_bytes(t);
    FUZZ_CHECK(want && got == *want);
  } catch (const std::invalid_argument& e) {
    FUZZ_CHECK(!want);
    FUZZ_CHECK(std::string_view(e.what()).size() > 0);
  }

  try {
    const auto sizes = harness::parse_sizes(t);
    const auto items = harness::split_list(t);
    FUZZ_CHECK(sizes.size() == items.size());
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      FUZZ_CHECK(sizes[i] != 0);
      FUZZ_CHECK(bytes_oracle(items[i]) == sizes[i]);
    }
  } catch (const harness::UsageError&) {  // naming -s: "-s 2,,4: an empty size in the list"
    bool bad = false;
    for (const auto& item : harness::split_list(t)) bad = bad || bytes_oracle(item).value_or(0) == 0;
    FUZZ_CHECK(bad);
  }

  // A range with min <= max, from the first byte.
  const std::int64_t min = (data[0] & 0x10) ? -1000 : 1;
  const std::int64_t max = (data[0] & 0x20) ? std::numeric_limits<std::int64_t>::max() : 65535;
  std::string arg = t;
  const std::string check = harness::whole_number("-n", min, max)(arg);
  const std::string_view value = std::string_view(t).starts_with('=') ? std::string_view(t).substr(1) : t;
  const auto n = parse_integer<std::int64_t>(value);
  FUZZ_CHECK(check.empty() == (n && *n >= min && *n <= max));
  std::string secs = t;
  (void)harness::positive_seconds("--timeout")(secs);

  if (const auto mtu = parse_integer<std::uint32_t>(t)) {
    const bool valid = *mtu == 0 || *mtu == 256 || *mtu == 512 || *mtu == 1024 || *mtu == 2048 || *mtu == 4096;
    FUZZ_CHECK(!harness::check_path_mtu("-m", *mtu).has_value() == valid);
  }

  for (const auto& item : parts) {
    name_round_trip<coll::Collective>(item, coll::parse_collective, coll::collective_name);
    name_round_trip<coll::Algorithm>(item, coll::parse_algorithm, coll::algorithm_name);
    // fp32 and fp16 are the shared vocabulary's other spellings of f32 and f16 (docs/cli.md).
    if (item == "fp32" || item == "fp16") {
      FUZZ_CHECK(coll::dtype_name(*coll::parse_dtype(item)) == item.substr(0, 1) + item.substr(2));
    } else {
      name_round_trip<coll::DType>(item, coll::parse_dtype, coll::dtype_name);
    }
    name_round_trip<coll::ReduceOp>(item, coll::parse_reduce_op, coll::reduce_op_name);
  }
  return 0;
}
