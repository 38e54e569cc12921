#include "fabench/pair/perftest_flags.hpp"

#include <array>
#include <string_view>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "fabench/harness/cli.hpp"

namespace fabench::pair {

namespace {

using harness::UsageError;
using harness::whole_number;

// Which perftest tools have a flag: fabench-lat stands for the *_lat tools,
// fabench-bw for the *_bw tools.
enum Tools : std::uint8_t { kLat = 1, kBw = 2, kBoth = 3 };

struct Refused {
  std::string_view names;  // CLI11 names
  bool takes_value;
  Tools tools;
  std::string_view why;
};

// perftest 4.5 flags that fabench refuses, each with its reason.
constexpr auto kRefused = std::to_array<Refused>({
    {"-A,--atomic_type", true, kBw, "atomic bandwidth is not supported yet (fabench-lat -A measures atomic latency)"},
    {"-C,--report-cycles", false, kLat, "fabench reports microseconds, not CPU cycles"},
    {"-f,--margin", true, kBoth, "fabench's -D measures the whole duration, without margins"},
    {"-O,--dualport", false, kBw, "dual-port runs are not supported"},
    {"--report-per-port", false, kBw, "dual-port runs are not supported"},
    {"-z,--com_rdma_cm", false, kBoth,
     "fabench exchanges its data over its TCP control connection; -R connects the queue pairs through rdma_cm"},
    {"--retry_count", true, kBoth,
     "fabench's -R makes one rdma_cm connection attempt per queue pair and names the failure (no retries)"},
    {"--log_dci_streams", true, kBoth, "DC transport is not supported"},
    {"--log_active_dci_streams", true, kBoth, "DC transport is not supported"},
    {"--aes_xts", false, kBoth, "encryption (AES-XTS) is not supported"},
    {"--encrypt_on_tx", false, kBoth, "encryption (AES-XTS) is not supported"},
    {"--sig_before", false, kBoth, "encryption (AES-XTS) is not supported"},
    {"--aes_block_size", true, kBoth, "encryption (AES-XTS) is not supported"},
    {"--data_enc_keys_number", true, kBoth, "encryption (AES-XTS) is not supported"},
    {"--kek_path", true, kBoth, "encryption (AES-XTS) is not supported"},
    {"--credentials_path", true, kBoth, "encryption (AES-XTS) is not supported"},
    {"--data_enc_key_app_path", true, kBoth, "encryption (AES-XTS) is not supported"},
    {"--dlid", true, kBoth,
     "fabench exchanges addresses over its control connection; a fixed destination LID is not supported"},
    {"--mmap", true, kBoth, "buffers from an mmap'd file are not supported yet"},
    {"--mmap-offset", true, kBoth, "buffers from an mmap'd file are not supported yet"},
    {"--odp", false, kBoth, "on-demand paging is not supported yet"},
    {"--cpu_util", false, kBoth, "CPU utilization reports are not supported yet"},
    {"--latency_gap", true, kLat, "a delay between latency iterations is not supported yet"},
    {"-g,--mcg", false, kBoth, "multicast is not supported"},
    {"-M,--MGID", true, kBoth, "multicast is not supported"},
    {"--use-srq", false, kBoth, "shared receive queues are not supported yet"},
    {"--inline_recv", true, kBoth, "inline receive is not supported yet"},
    {"--recv_post_list", true, kBw, "receive post lists are not supported yet"},
    {"--burst_size", true, kBw, "the rate limiter is not supported yet"},
    {"--typical_pkt_size", true, kBw, "the rate limiter is not supported yet"},
    {"--rate_limit", true, kBw, "the rate limiter is not supported yet"},
    {"--rate_units", true, kBw, "the rate limiter is not supported yet"},
    {"--rate_limit_type", true, kBw, "the rate limiter is not supported yet"},
});

std::string flag_name(std::string_view names) {
  // The long name, as users type it: "--report-cycles" from "-C,--report-cycles".
  const auto comma = names.rfind(',');
  return std::string(comma == std::string_view::npos ? names : names.substr(comma + 1));
}

void add_refused(CLI::App& app, PerftestFlags& f, const Refused& r, Kind kind) {
  const Tools mine = kind == Kind::kLatency ? kLat : kBw;
  if ((r.tools & mine) == 0) return;
  std::string line = fmt::format("{}: {}", flag_name(r.names), r.why);
  if (r.why.starts_with("is ")) line = fmt::format("{} {}", flag_name(r.names), r.why);
  auto record = [&f, line] { f.refused.push_back(line); };
  CLI::Option* opt = r.takes_value ? app.add_option_function<std::string>(std::string(r.names),
                                                                          [record](const std::string&) { record(); })
                                   : app.add_flag_callback(std::string(r.names), record);
  opt->group("");  // hidden from --help; docs/perftest.md lists them
}

void add_output_flags(CLI::App& app, PerftestFlags& f, Kind kind) {
  const bool bw = kind == Kind::kBandwidth;
  app.add_option("--output-format", f.output_format,
                 "google (Google Benchmark's reporters, default) or perftest (perftest's own table, for scripts)")
      ->check(CLI::IsMember({"google", "perftest"}))
      ->group(kPerftestGroup);
  app.add_option("--output", f.output,
                 bw ? "Print only one number: bandwidth or message_rate (perftest's --output)"
                    : "Print only one number: latency (the average, perftest's --output)")
      ->group(kPerftestGroup);
  app.add_flag("--out_json", f.out_json, "Also write perftest's JSON report (perftest_out.json)")
      ->group(kPerftestGroup);
  app.add_option_function<std::string>(
         "--out_json_file",
         [&f](const std::string& path) {
           f.out_json_file = path;
           f.out_json = true;
         },
         "File of --out_json (implies it)")
      ->group(kPerftestGroup);
  if (bw) {
    app.add_flag("--report_gbits", f.report_gbits, "perftest table in Gb/sec (1e9 bit/s) instead of MB/sec (2^20 B/s)")
        ->group(kPerftestGroup);
    app.add_flag("-N,--noPeak", f.no_peak, "perftest table: print 0 as the peak, as perftest -N")
        ->group(kPerftestGroup);
    app.add_flag("--report-both", f.report_both, "With -b: one row per direction (perftest table)")
        ->group(kPerftestGroup);
    app.add_option("-w,--limit_bw", f.limit_bw, "Exit 1 when the average bandwidth is below this (table's unit)")
        ->check(harness::number_at_least("-w", 0))
        ->group(kPerftestGroup);
    app.add_option("-y,--limit_msgrate", f.limit_msgrate, "Exit 1 when the message rate is below this (Mpps)")
        ->check(harness::number_at_least("-y", 0))
        ->group(kPerftestGroup);
    app.add_flag("--run_infinitely", f.run_infinitely,
                 "Repeat every benchmark until SIGINT/SIGTERM (-D each, default 5)")
        ->group(kPerftestGroup);
    app.add_flag("--reversed", f.reversed,
                 "Reverse the traffic: the server writes, sends or reads toward the client; the rates are the "
                 "server's, timed there")
        ->group(kPerftestGroup);
    app.add_option("--wait_destroy", f.wait_destroy_s, "Wait this many seconds before releasing resources")
        ->check(whole_number("--wait_destroy", 0, 3600))
        ->group(kPerftestGroup);
  } else {
    app.add_flag("-H,--report-histogram", f.histogram, "perftest table: also print every sample, sorted")
        ->group(kPerftestGroup);
    app.add_flag("-U,--report-unsorted", f.unsorted, "perftest table: also print every sample, in order")
        ->group(kPerftestGroup);
  }
}

void add_side_flags(CLI::App& app, PerftestFlags& f, Kind kind) {
  const std::string g = kPerftestGroup;
  if (kind == Kind::kBandwidth) {
    app.add_flag("--mr_per_qp", f.side.mr_per_qp,
                 "One memory region per QP on this end, instead of one for all its QPs")
        ->group(g);
  }
  app.add_option("-u,--qp-timeout", f.side.qp_timeout, "RC ACK timeout 4.096 us x 2^N, 0-31 (0: none; default 14, as perftest)")
      ->check(whole_number("-u", 0, 31))
      ->group(g);
  app.add_option("-L,--hop_limit", f.side.hop_limit, "GRH hop limit of this end's packets (default 64)")
      ->check(whole_number("-L", 0, 255))
      ->group(g);
  app.add_option("--pkey_index", f.side.pkey_index, "P_Key index of this end's QPs (default 0)")
      ->check(whole_number("--pkey_index", 0, 65535))
      ->group(g);
  app.add_option("-o,--outs", f.side.max_rd_atomic, "Reads/atomics in flight per QP (default: device max, at most 16)")
      ->check(whole_number("-o", 1, 255))
      ->group(g);
  app.add_option("-X,--vector", f.side.comp_vector, "Completion vector of this end's CQs (default 0)")
      ->check(whole_number("-X", 0, 1023))
      ->group(g);
  app.add_flag("--use_hugepages", f.side.huge_pages, "Buffers on huge pages (fails when none are free)")->group(g);
  app.add_flag("--perform_warm_up", f.warm_up, "One unmeasured run of each benchmark before the measured ones")
      ->group(g);
  app.add_option("-W,--report-counters", f.report_counters,
                 "Report these port/hw counters' changes, e.g. counters/port_xmit_data,hw_counters/out_of_sequence "
                 "(both ends; perftest table: after each row)")
      ->group(g);
  app.add_option("--force-link", f.force_link, "IB or Ethernet: fail unless the port's link layer is that")
      ->check(CLI::IsMember({"IB", "Ethernet"}))
      ->group(g);
  // Accepted for scripts; what they ask for is what fabench always does.
  app.add_flag("--use_old_post_send")->description("Accepted: fabench always posts with ibv_post_send")->group(g);
  app.add_flag("--dont_xchg_versions")
      ->description("Accepted: fabench's control connection always checks versions")
      ->group(g);
  app.add_flag("--disable_pcie_relaxed")->description("Accepted: fabench never asks for relaxed ordering")->group(g);
}

}  // namespace

void add_perftest_flags(CLI::App& app, PerftestFlags& f, Kind kind) {
  f.kind = kind;
  add_output_flags(app, f, kind);
  add_side_flags(app, f, kind);
  for (const auto& r : kRefused) add_refused(app, f, r, kind);
  harness::help_all_only(app, kPerftestGroup);
}

void check_perftest_flags(const PerftestFlags& f, bool fixed_iterations) {
  if (!f.refused.empty()) throw UsageError(f.refused.front());
  const std::string& out = f.output;
  if (!out.empty()) {
    const bool bw = f.kind == Kind::kBandwidth;
    if (bw && out != "bandwidth" && out != "message_rate")
      throw UsageError(fmt::format("--output {}: fabench-bw prints bandwidth or message_rate", out));
    if (!bw && out != "latency") throw UsageError(fmt::format("--output {}: fabench-lat prints latency", out));
  }
  if (!out.empty() && (f.histogram || f.unsorted))
    throw UsageError("--output prints one number; -H/-U print every sample: choose one");
  if (f.run_infinitely && fixed_iterations)
    throw UsageError("--run_infinitely repeats runs of -D seconds; it contradicts -n");
}

}  // namespace fabench::pair
