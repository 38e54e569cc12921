// --output-format perftest: perftest 4.5's own text, so a script that parses
// ib_write_bw or ib_write_lat with awk reads fabench unchanged. The text
// functions are pure (test/unit/test_pair_perftest.cpp compares their layout
// with real perftest output captured in the test bed); PerftestReporter
// feeds them from Google Benchmark's runs and also writes perftest's JSON
// (--out_json) and checks the -w/-y limits.
//
// Conventions kept from perftest: bandwidth in MB/sec = 2^20 bytes/s, or
// Gb/sec = 1e9 bit/s with --report_gbits; MsgRate in Mpps (1e6 messages/s);
// latency in usec, half the round trip for write/send, the full round trip
// for read/atomics; t_typical is the median. Where fabench differs it says
// so in docs/perftest.md: t_max is the largest sample (perftest drops its
// two largest), and "BW peak" is the best average of the runs reported for
// a size (fabench has no per-message timestamps), 0 with -N as in perftest.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>

#include "fabench/harness/samples.hpp"
#include "fabench/pair/perftest_flags.hpp"
#include "fabench/pair/spec.hpp"
#include "fabench/verbs/endpoint.hpp"

namespace fabench::pair {

// What the block above perftest's table says about one test.
struct PerftestBanner {
  TestSpec spec;
  std::string device;
  std::string link_layer;  // "Ethernet" or "IB"
  int gid_index = -1;
  std::uint32_t mtu_bytes = 0;
  std::uint32_t inline_bytes = 0;  // write/send
  std::uint32_t outs = 0;          // read/atomics: reads/atomics in flight
  std::vector<verbs::Endpoint> local;
  std::vector<verbs::Endpoint> remote;
};

struct PerftestBwRow {
  std::uint64_t bytes = 0;
  std::uint64_t iterations = 0;
  double peak = 0;     // in the table's unit
  double average = 0;  // in the table's unit
  double msg_rate_mpps = 0;
};

struct PerftestLatRow {  // microseconds
  std::uint64_t bytes = 0;
  std::uint64_t iterations = 0;
  double min = 0, max = 0, typical = 0, average = 0, stdev = 0, p99 = 0, p999 = 0;
};

// The dashed line between perftest's blocks, with its newline.
[[nodiscard]] std::string perftest_rule(Kind kind);
// Rule, test name, parameters, rule, addresses, rule.
[[nodiscard]] std::string perftest_banner(const PerftestBanner& b);
// The column names of the table ("#bytes #iterations ..."), with newline.
[[nodiscard]] std::string perftest_columns(Kind kind, bool gbits, bool duration);
[[nodiscard]] std::string perftest_bw_row(const PerftestBwRow& row, bool gbits);
[[nodiscard]] std::string perftest_lat_row(const PerftestLatRow& row);
// Duration mode (-D): perftest prints the average and transactions per second.
[[nodiscard]] std::string perftest_lat_duration_row(const PerftestLatRow& row, double seconds);
// Every sample, one per line ("#, usec" then "N, value"), for -H and -U.
[[nodiscard]] std::string perftest_samples(const std::vector<double>& us);
// perftest's --out_json document for one row (the last row of a run, as
// perftest); `all_rows` (fabench's addition) holds every row in order.
[[nodiscard]] std::string perftest_json(const PerftestBanner& b, const std::string& results,
                                        const std::vector<std::string>& all_rows);
[[nodiscard]] std::string perftest_json_bw(const PerftestBwRow& row, const std::string& output);
[[nodiscard]] std::string perftest_json_lat(const PerftestLatRow& row, const std::string& output);
// -W: each named counter's change, "\tNAME=DELTA" in the order given, then
// an empty line, as perftest prints them after a row.
[[nodiscard]] std::string perftest_counters(const std::vector<std::pair<std::string, std::int64_t>>& named);
// MB/sec (2^20 B/s) or Gb/sec (1e9 bit/s) from Gb/s.
[[nodiscard]] double perftest_bw_unit(double gbps, bool gbits) noexcept;

// A Google Benchmark reporter that prints perftest's table (and/or passes
// every call on to `inner`, Google Benchmark's own reporter, when the
// console keeps that format), writes --out_json and checks -w/-y.
class PerftestReporter : public benchmark::BenchmarkReporter {
 public:
  // `banner(spec)` describes a spec's test when its first row is printed;
  // `samples` holds the last latency run's samples (for -H/-U).
  PerftestReporter(const PerftestFlags& flags, std::vector<TestSpec> specs, bool duration,
                   std::function<PerftestBanner(const TestSpec&)> banner, const harness::Samples* samples,
                   std::unique_ptr<benchmark::BenchmarkReporter> inner);

  bool ReportContext(const Context& context) override;
  void ReportRuns(const std::vector<Run>& reports) override;
  void Finalize() override;

  // One line per failed check: a run below a -w/-y limit, a JSON file not
  // written. Empty when all passed.
  [[nodiscard]] const std::vector<std::string>& failures() const noexcept { return failures_; }
  // Rows printed so far (for --run_infinitely's rounds and tests).
  [[nodiscard]] std::size_t rows() const noexcept { return rows_; }

 private:
  [[nodiscard]] const TestSpec* spec_of(const Run& run) const;
  void report_bw(const TestSpec& spec, const Run& run, double peak_gbps);
  void report_lat(const TestSpec& spec, const Run& run);
  void start_group(const TestSpec& spec);
  void check_limits(const TestSpec& spec, const PerftestBwRow& row);
  void print_counters(const Run& run);
  void print(const std::string& text);

  PerftestFlags flags_;
  std::vector<TestSpec> specs_;
  bool duration_;
  std::function<PerftestBanner(const TestSpec&)> banner_;
  const harness::Samples* samples_;
  std::unique_ptr<benchmark::BenchmarkReporter> inner_;
  std::optional<TestSpec> group_;  // the test whose table is open
  PerftestBanner group_banner_;
  std::vector<std::string> json_rows_;
  std::string json_last_;
  std::vector<std::string> failures_;
  std::size_t rows_ = 0;
};

}  // namespace fabench::pair
