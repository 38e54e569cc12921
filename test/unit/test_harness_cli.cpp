// Numeric flag checks: every error names the flag and the allowed range in
// plain words, never CLI11's "Value 0 not in range 0.000000 to 1.79e308".
// The device flags every binary takes; sizes, lists and path MTUs.
#include <CLI/CLI.hpp>
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "fabench/harness/cli.hpp"

using fabench::harness::add_device_flags;
using fabench::harness::all_sizes;
using fabench::harness::check_path_mtu;
using fabench::harness::DeviceFlags;
using fabench::harness::parse_bytes;
using fabench::harness::parse_error_text;
using fabench::harness::parse_integer;
using fabench::harness::parse_sizes;
using fabench::harness::positive_seconds;
using fabench::harness::split_list;
using fabench::harness::whole_number;

namespace {

// Parses `args` with -n (>= 1), -q (1..1024) and -D (seconds); returns the
// error line, or "" when the arguments were accepted.
std::string parse(std::vector<std::string> args) {
  CLI::App app;
  long long n = 0;
  unsigned q = 0;
  double d = 0;
  app.add_option("-n,--iters", n)->check(whole_number("-n", 1, std::numeric_limits<std::int64_t>::max()));
  app.add_option("-q,--qp", q)->check(whole_number("-q", 1, 1024));
  app.add_option("-D,--duration", d)->check(positive_seconds("-D"));
  std::vector<const char*> argv{"prog"};
  for (const auto& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), const_cast<char**>(argv.data()));
  } catch (const CLI::ParseError& e) {
    return parse_error_text(e);
  }
  return {};
}

}  // namespace

TEST_CASE("numeric flags: errors name the flag and the range", "[harness][cli]") {
  CHECK(parse({"-n", "0"}) == "-n must be at least 1 (got 0)");
  CHECK(parse({"--iters", "-4"}) == "-n must be at least 1 (got -4)");
  CHECK(parse({"-n", "12x"}) == "-n: '12x' is not a whole number (expected at least 1)");
  CHECK(parse({"-n", "99999999999999999999"}) == "-n: 99999999999999999999 is too large (at most 9223372036854775807)");
  CHECK(parse({"-q", "0"}) == "-q must be from 1 to 1024 (got 0)");
  CHECK(parse({"-q", "1025"}) == "-q must be from 1 to 1024 (got 1025)");
  CHECK(parse({"-D", "-1"}) == "-D must be more than 0 seconds (got -1)");
  CHECK(parse({"-D", "0"}) == "-D must be more than 0 seconds (got 0)");
  CHECK(parse({"-D", "soon"}) == "-D: 'soon' is not a number of seconds");
  CHECK(parse({"--duration=-1"}) == "-D must be more than 0 seconds (got -1)");
}

TEST_CASE("numeric flags: values in range pass through unchanged", "[harness][cli]") {
  CHECK(parse({"-n", "1", "-q", "1024", "-D", "0.25"}).empty());
  CHECK(parse({"-n", "9223372036854775807"}).empty());
}

namespace {

// Parses `args` with the device flags; returns the error line or "".
std::string parse_device(std::vector<std::string> args, DeviceFlags& flags) {
  CLI::App app;
  add_device_flags(app, flags);
  std::vector<const char*> argv{"prog"};
  for (const auto& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), const_cast<char**>(argv.data()));
  } catch (const CLI::ParseError& e) {
    return parse_error_text(e);
  }
  return {};
}

}  // namespace

TEST_CASE("device flags: -d -i -x --timeout -v fill the context options", "[harness][cli]") {
  DeviceFlags f;
  REQUIRE(parse_device({}, f).empty());
  CHECK(f.context_options().device.empty());
  CHECK(f.context_options().ib_port == 0);
  CHECK(f.context_options().gid_index == -1);
  CHECK(f.timeout() == std::chrono::seconds(30));
  CHECK_FALSE(f.verbose);

  DeviceFlags g;
  REQUIRE(parse_device({"-d", "rxe1", "-i", "2", "-x", "3", "--timeout", "2.5", "-v"}, g).empty());
  CHECK(g.context_options().device == "rxe1");
  CHECK(g.context_options().ib_port == 2);
  CHECK(g.context_options().gid_index == 3);
  CHECK(g.timeout() == std::chrono::milliseconds(2500));
  CHECK(g.verbose);

  DeviceFlags h;
  CHECK(parse_device({"-i", "0"}, h) == "-i must be from 1 to 255 (got 0)");
  CHECK(parse_device({"--timeout", "0"}, h) == "--timeout must be more than 0 seconds (got 0)");
}

TEST_CASE("sizes parse with units, and bad sizes say why", "[harness][cli]") {
  CHECK(parse_sizes("2,64,4K,1M") == std::vector<std::uint64_t>{2, 64, 4096, 1 << 20});
  CHECK(parse_bytes("4G") == (4ULL << 30));
  CHECK(parse_bytes("512MiB") == (512ULL << 20));
  CHECK(parse_bytes("64k") == 65536);
  CHECK(parse_bytes("7B") == 7);
  CHECK_THROWS_WITH(parse_bytes("12Q"), Catch::Contains("unknown unit"));
  CHECK_THROWS_WITH(parse_bytes("abc"), Catch::Contains("not a size"));
  CHECK_THROWS_WITH(parse_bytes("-4K"), Catch::Contains("not a size"));
  CHECK_THROWS_WITH(parse_bytes(""), Catch::Contains("empty"));
  // parse_sizes names its flag (-s unless told): the line a user sees.
  CHECK_THROWS_WITH(parse_sizes("64,0"), "-s 64,0: message size 0 is not measurable");
  CHECK_THROWS_WITH(parse_sizes("64,,1K"), "-s 64,,1K: an empty size in the list");
  CHECK_THROWS_WITH(parse_sizes("", "--sizes"), "--sizes: no size given");
  CHECK_THROWS_WITH(parse_sizes("2,4X"), "-s: '4X': unknown unit 'X' (use K, M or G)");
  CHECK_THROWS_WITH(fabench::harness::parse_flag_bytes("--max-mem", "5X"),
                    "--max-mem: '5X': unknown unit 'X' (use K, M or G)");
  // Too many digits for 64 bits fails in the number itself...
  CHECK(parse_bytes("18446744073709551615") == 18446744073709551615ULL);
  CHECK_THROWS_WITH(parse_bytes("18446744073709551616"), "'18446744073709551616' is too large");
  CHECK_THROWS_WITH(parse_bytes("99999999999999999999"), "'99999999999999999999' is too large");
  CHECK_THROWS_WITH(parse_sizes("99999999999999999999"), "-s: '99999999999999999999' is too large");
  // ...a number times its unit past 2^64 in the overflow check, exactly at the boundary of each unit.
  CHECK(parse_bytes("18014398509481983K") == 18014398509481983ULL << 10);
  CHECK_THROWS_WITH(parse_bytes("18014398509481984K"), "'18014398509481984K' is too large");
  CHECK(parse_bytes("17592186044415MiB") == 17592186044415ULL << 20);
  CHECK_THROWS_WITH(parse_bytes("17592186044416M"), "'17592186044416M' is too large");
  CHECK(parse_bytes("17179869183G") == 17179869183ULL << 30);
  CHECK_THROWS_WITH(parse_bytes("17179869184G"), "'17179869184G' is too large");
  CHECK_THROWS_WITH(parse_sizes("1K,17179869184GiB"), "-s: '17179869184GiB' is too large");
  const auto all = all_sizes();
  REQUIRE(all.size() == 23);
  CHECK(all.front() == 2);
  CHECK(all.back() == (8ULL << 20));
}

TEST_CASE("whole integers and lists", "[harness][cli]") {
  CHECK(parse_integer<std::uint32_t>("4096") == 4096U);
  CHECK(parse_integer<std::int32_t>("-1") == -1);
  CHECK_FALSE(parse_integer<std::uint8_t>("256").has_value());
  CHECK_FALSE(parse_integer<int>("12x").has_value());
  CHECK_FALSE(parse_integer<int>("").has_value());
  CHECK(split_list("write,send") == std::vector<std::string>{"write", "send"});
  CHECK(split_list("rc") == std::vector<std::string>{"rc"});
  CHECK(split_list("a,,b") == std::vector<std::string>{"a", "", "b"});
}

TEST_CASE("path MTUs: the five verbs knows, or 0 for automatic", "[harness][cli]") {
  for (std::uint32_t mtu : {0U, 256U, 512U, 1024U, 2048U, 4096U}) CHECK_FALSE(check_path_mtu("-m", mtu).has_value());
  CHECK(std::string(check_path_mtu("-m", 3000).value().what()) == "-m 3000: MTU must be 256, 512, 1024, 2048 or 4096");
  CHECK(check_path_mtu("-m", 257).has_value());
  CHECK(check_path_mtu("-m", 8192).has_value());
}

TEST_CASE("size_range: -b..-e by -f, naming the flag, no overflow near 2^64", "[cli]") {
  using fabench::harness::size_range;
  CHECK(size_range("1K", "16K", 4) == std::vector<std::uint64_t>{1024, 4096, 16384});
  CHECK(size_range("1K", "20K", 4) == std::vector<std::uint64_t>{1024, 4096, 16384});
  CHECK(size_range("64", "64", 2) == std::vector<std::uint64_t>{64});
  CHECK_THROWS_WITH(size_range("abc", "1K", 2), "-b: 'abc' is not a size");
  CHECK_THROWS_WITH(size_range("1K", "", 2), Catch::Matchers::StartsWith("-e: "));
  CHECK_THROWS_WITH(size_range("4M", "1K", 2), "-b 4M -e 1K: need 0 < -b <= -e");
  CHECK_THROWS_WITH(size_range("0", "1K", 2), "-b 0 -e 1K: need 0 < -b <= -e");
  // 2^63 .. 2^64-1: multiplying 2^63 by 2 would wrap to 0 and loop forever.
  const auto big = size_range("8589934592G", "17179869183G", 2);
  REQUIRE(big.size() == 1);
  CHECK(big[0] == (std::uint64_t{1} << 63));
}
