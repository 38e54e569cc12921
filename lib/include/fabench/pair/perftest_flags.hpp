// The perftest 4.5 flags of fabench-lat and fabench-bw beyond the ones that
// were always theirs (-d -s -n -q ...): every flag of ib_{write,send,read,
// atomic}_{lat,bw} is accepted, so a script moves over unchanged. Each is
// either implemented (output format, limits, warm-up, QP attributes of this
// end...) or refused with one line that says why ("--odp: on-demand paging
// is not supported yet"). docs/perftest.md lists every flag and its status.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fabench/harness/cli.hpp"
#include "fabench/pair/side.hpp"
#include "fabench/pair/spec.hpp"

namespace fabench::pair {

// The help group of perftest's flags (and perftest's spellings --qp,
// --post_list): listed by --help-all, not --help.
inline constexpr const char* kPerftestGroup = "perftest compatibility";

struct PerftestFlags {
  Kind kind = Kind::kLatency;            // the tool family, set by add_perftest_flags
  std::string output_format = "google";  // --output-format: google or perftest
  bool report_gbits = false;             // Gb/sec (1e9 bit/s) instead of MB/sec (2^20 B/s)
  bool no_peak = false;                  // -N: the peak column prints 0
  std::string output;                    // --output: "bandwidth", "message_rate" or "latency" (one number); "": table
  bool out_json = false;
  std::string out_json_file;  // "": perftest_out.json in the working directory
  bool report_both = false;   // bidirectional: TX and RX rows
  bool histogram = false;     // -H: every sample, sorted
  bool unsorted = false;      // -U: every sample, in order
  double limit_bw = -1;       // -w, in the table's bandwidth unit; < 0: none
  double limit_msgrate = -1;  // -y, Mpps; < 0: none
  bool warm_up = false;       // --perform_warm_up
  bool run_infinitely = false;
  bool reversed = false;  // --reversed (bandwidth): the server sends, the client receives
  unsigned wait_destroy_s = 0;
  std::string force_link;       // "IB" or "Ethernet": the port must be that
  std::string report_counters;  // -W: counter names, comma-separated (perftest prints their changes per row)
  SideOptions side;             // -u -L --pkey_index -o -X --use_hugepages --mr_per_qp
  // "FLAG: why", one per refused flag given, in command-line order.
  std::vector<std::string> refused;

  [[nodiscard]] bool perftest_format() const noexcept { return output_format == "perftest" || !output.empty(); }
  // Something needs the rows of a run (table, one number, JSON or limits).
  [[nodiscard]] bool needs_rows() const noexcept {
    return perftest_format() || out_json || limit_bw >= 0 || limit_msgrate >= 0;
  }
  [[nodiscard]] std::string json_path() const { return out_json_file.empty() ? "perftest_out.json" : out_json_file; }
};

// Adds perftest's flags that fabench-lat (kLatency) or fabench-bw
// (kBandwidth) did not have, as that tool family has them; refused ones are
// hidden from --help and recorded in `f.refused` when given.
void add_perftest_flags(CLI::App& app, PerftestFlags& f, Kind kind);

// Throws harness::UsageError for the first refused flag, or for perftest
// flags that contradict each other or the run (--output=latency in
// fabench-bw, -H with --output, --run_infinitely with -n).
void check_perftest_flags(const PerftestFlags& f, bool fixed_iterations);

}  // namespace fabench::pair
