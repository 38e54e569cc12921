#include "fabench/pair/perftest_report.hpp"

#include <algorithm>
#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <fmt/printf.h>

#include "fabench/harness/counters.hpp"
#include "fabench/pair/report.hpp"

namespace fabench::pair {

namespace {

// perftest's test names ("RDMA_Write BW Test") and its JSON "test" key.
std::string test_title(const TestSpec& s, char sep) {
  std::string t;
  switch (s.op) {
    case Op::kSend: t = "Send"; break;
    case Op::kWrite: t = "RDMA_Write"; break;
    case Op::kRead: t = "RDMA_Read"; break;
    case Op::kFetchAdd: t = fmt::format("Atomic{}FETCH_AND_ADD", sep); break;
    case Op::kCompSwap: t = fmt::format("Atomic{}CMP_AND_SWAP", sep); break;
  }
  t += sep;
  if (s.kind == Kind::kBandwidth) {
    if (s.bidirectional) t += fmt::format("Bidirectional{}", sep);
    if (s.post_list > 1) t += fmt::format("Post{}List{}", sep, sep);
    t += fmt::format("BW{}", sep);
  } else {
    t += fmt::format("Latency{}", sep);
  }
  return t + "Test";
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  return out;
}

bool one_sided_read(Op op) { return op == Op::kRead || is_atomic(op); }

std::string address_lines(const char* who, const std::vector<verbs::Endpoint>& eps, const TestSpec& spec,
                          std::uint32_t outs) {
  std::string out;
  for (const auto& e : eps) {
    out += fmt::sprintf(" %s address: LID %#04x QPN %#06x PSN %#06x", who, e.lid, e.qpn, e.psn);
    // As perftest 4.5 prints them: reads add OUT; atomics and sends show no memory key.
    if (spec.op == Op::kRead) out += fmt::sprintf(" OUT %#04x", outs);
    if (spec.op == Op::kRead || spec.op == Op::kWrite) out += fmt::sprintf(" RKey %#08x VAddr %#016lx", e.rkey, e.addr);
    out += "\n";
    if (e.gid_index >= 0) {
      out += " GID: ";
      for (std::size_t i = 0; i < e.gid.size(); ++i) out += fmt::sprintf(i == 0 ? "%02d" : ":%02d", e.gid[i]);
      out += "\n";
    }
  }
  return out;
}

}  // namespace

std::string perftest_counters(const std::vector<std::pair<std::string, std::int64_t>>& named) {
  std::string out;
  for (const auto& [name, delta] : named) out += fmt::format("\t{}={}\n", name, delta);
  return out + "\n";
}

std::string perftest_rule(Kind /*kind*/) { return std::string(87, '-') + "\n"; }

std::string perftest_banner(const PerftestBanner& b) {
  const TestSpec& s = b.spec;
  // perftest's read and atomic tools print one rule more before the banner.
  std::string out = one_sided_read(s.op) ? perftest_rule(s.kind) + perftest_rule(s.kind) : perftest_rule(s.kind);
  out += "                    " + test_title(s, ' ') + "\n";
  out += fmt::sprintf(" Dual-port       : %s\t\tDevice         : %s\n", "OFF", b.device);
  out += fmt::sprintf(" Number of qps   : %d\t\tTransport type : %s\n", s.qps, "IB");
  out += fmt::sprintf(" Connection type : %s\t\tUsing SRQ      : %s\n", upper(transport_name(s.transport)), "OFF");
  out += fmt::sprintf(" PCIe relax order: %s\n", "OFF");
  out += fmt::sprintf(" ibv_wr* API     : %s\n", "OFF");
  out += fmt::sprintf(" TX depth        : %d\n", s.tx_depth);
  if (s.kind == Kind::kBandwidth && s.post_list > 1) out += fmt::sprintf(" Post List       : %d\n", s.post_list);
  if (s.op == Op::kSend && s.bidirectional) out += fmt::sprintf(" RX depth        : %d\n", s.rx_depth);
  if (s.kind == Kind::kBandwidth) out += fmt::sprintf(" CQ Moderation   : %d\n", s.cq_mod);
  out += fmt::sprintf(" Mtu             : %d[B]\n", b.mtu_bytes);
  out += fmt::sprintf(" Link type       : %s\n", b.link_layer);
  if (b.gid_index >= 0) out += fmt::sprintf(" GID index       : %d\n", b.gid_index);
  if (one_sided_read(s.op)) out += fmt::sprintf(" Outstand reads  : %d\n", b.outs);
  else out += fmt::sprintf(" Max inline data : %d[B]\n", b.inline_bytes);
  out += fmt::sprintf(" rdma_cm QPs\t : %s\n", s.rdma_cm ? "ON" : "OFF");
  out += fmt::sprintf(" Data ex. method : %s\n", "Ethernet");
  out += perftest_rule(s.kind);
  out += address_lines("local", b.local, s, b.outs);
  out += address_lines("remote", b.remote, s, b.outs);
  out += perftest_rule(s.kind);
  return out;
}

std::string perftest_columns(Kind kind, bool gbits, bool duration) {
  if (kind == Kind::kBandwidth) {
    return fmt::format(" #bytes     #iterations    BW peak[{0}]    BW average[{0}]   MsgRate[Mpps]\n",
                       gbits ? "Gb/sec" : "MB/sec");
  }
  if (duration) return " #bytes        #iterations       t_avg[usec]    tps average\n";
  return " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   "
         "99% percentile[usec]   99.9% percentile[usec] \n";
}

double perftest_bw_unit(double gbps, bool gbits) noexcept {
  return gbits ? gbps : gbps * 1e9 / 8 / static_cast<double>(1 << 20);
}

std::string perftest_bw_row(const PerftestBwRow& r, bool gbits) {
  // Gb/sec below 0.1 gets six decimals, as in perftest.
  if (gbits && r.average < 0.1) {
    return fmt::sprintf(" %-7lu    %lu           %-7.6f            %-7.6f            %-7.6f\n", r.bytes, r.iterations,
                        r.peak, r.average, r.msg_rate_mpps);
  }
  return fmt::sprintf(" %-7lu    %-10lu       %-7.2f            %-7.2f\t\t   %-7.6f\n", r.bytes, r.iterations, r.peak,
                      r.average, r.msg_rate_mpps);
}

std::string perftest_lat_row(const PerftestLatRow& r) {
  return fmt::sprintf(
      " %-7lu %lu          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     \t%-7.2f\t\t%-7.2f \t\t%-7.2f\n",
      r.bytes, r.iterations, r.min, r.max, r.typical, r.average, r.stdev, r.p99, r.p999);
}

std::string perftest_lat_duration_row(const PerftestLatRow& r, double seconds) {
  const double tps = seconds > 0 ? static_cast<double>(r.iterations) / seconds : 0;
  return fmt::sprintf(" %-7lu       %lu            %-7.2f        %-7.2f\n", r.bytes, r.iterations, r.average, tps);
}

std::string perftest_samples(const std::vector<double>& us) {
  std::string out = "#, usec\n";
  for (std::size_t i = 0; i < us.size(); ++i) out += fmt::sprintf("%d, %g\n", i + 1, us[i]);
  return out;
}

std::string perftest_json_bw(const PerftestBwRow& r, const std::string& output) {
  if (output == "bandwidth") return fmt::sprintf("\"bw_avg\": %f", r.average);
  if (output == "message_rate") return fmt::sprintf("\"msgRate_avg\": %f", r.msg_rate_mpps);
  return fmt::sprintf(
      "\"MsgSize\": %lu,\n\"n_iterations\": %lu,\n\"BW_peak\": %.2f,\n\"BW_average\": %.2f,\n"
      "\"MsgRate\": %.6f",
      r.bytes, r.iterations, r.peak, r.average, r.msg_rate_mpps);
}

std::string perftest_json_lat(const PerftestLatRow& r, const std::string& output) {
  if (output == "latency") return fmt::sprintf("\"avg_lat\": %f", r.average);
  return fmt::sprintf(
      "\"MsgSize\": %lu,\n\"n_iterations\": %lu,\n\"t_min\": %.2f,\n\"t_max\": %.2f,\n\"t_typical\": %.2f,\n"
      "\"t_avg\": %.2f,\n\"t_stdev\": %.2f,\n\"percentile_99\": %.2f,\n\"percentile_99.9\": %.2f",
      r.bytes, r.iterations, r.min, r.max, r.typical, r.average, r.stdev, r.p99, r.p999);
}

std::string perftest_json(const PerftestBanner& b, const std::string& results,
                          const std::vector<std::string>& all_rows) {
  const TestSpec& s = b.spec;
  std::string out = "{\n\"test_info\": {\n";
  out += fmt::format("\"test\": \"{}\",\n", test_title(s, '_'));
  out += fmt::format("\"Dual_port\": \"OFF\",\n\"Device\": \"{}\",\n", b.device);
  out += fmt::format("\"Number_of_qps\": {},\n\"Transport_type\": \"IB\",\n", s.qps);
  out += fmt::format("\"Connection_type\": \"{}\",\n\"Using_SRQ\": \"OFF\",\n", upper(transport_name(s.transport)));
  out += fmt::format("\"PCIe_relax_order\": \"OFF\",\n\"ibv_wr_API\": \"OFF\",\n\"TX_depth\": {},\n", s.tx_depth);
  if (s.op == Op::kSend && s.bidirectional) out += fmt::format("\"RX_depth\": {},\n", s.rx_depth);
  if (s.kind == Kind::kBandwidth) out += fmt::format("\"CQ_Moderation\": {},\n", s.cq_mod);
  out += fmt::format("\"Mtu\": {},\n\"Link_type\": \"{}\",\n", b.mtu_bytes, b.link_layer);
  if (b.gid_index >= 0) out += fmt::format("\"GID_index\": {},\n", b.gid_index);
  if (one_sided_read(s.op)) out += fmt::format("\"Outstand_reads\": {},\n", b.outs);
  else out += fmt::format("\"Max_inline_data\": {},\n", b.inline_bytes);
  out += fmt::format("\"rdma_cm_QPs\": \"{}\",\n\"Data_ex_method\": \"Ethernet\"\n}},\n", s.rdma_cm ? "ON" : "OFF");
  out += "\"results\": {\n" + results + "\n},\n";
  out += "\"all_results\": [\n";
  for (std::size_t i = 0; i < all_rows.size(); ++i) {
    out += "{\n" + all_rows[i] + "\n}" + (i + 1 < all_rows.size() ? ",\n" : "\n");
  }
  out += "]\n}\n";
  return out;
}

// ----------------------------------------------------------- the reporter --

PerftestReporter::PerftestReporter(const PerftestFlags& flags, std::vector<TestSpec> specs, bool duration,
                                   std::function<PerftestBanner(const TestSpec&)> banner,
                                   const harness::Samples* samples, std::unique_ptr<benchmark::BenchmarkReporter> inner)
    : flags_(flags),
      specs_(std::move(specs)),
      duration_(duration),
      banner_(std::move(banner)),
      samples_(samples),
      inner_(std::move(inner)) {}

bool PerftestReporter::ReportContext(const Context& context) { return inner_ ? inner_->ReportContext(context) : true; }

const TestSpec* PerftestReporter::spec_of(const Run& run) const {
  const std::string name = run.run_name.function_name;
  for (const auto& s : specs_) {
    if (s.name() == name) return &s;
  }
  return nullptr;
}

void PerftestReporter::print(const std::string& text) {
  if (!flags_.perftest_format()) return;
  GetOutputStream() << text;
  GetOutputStream().flush();
}

void PerftestReporter::start_group(const TestSpec& spec) {
  TestSpec key = spec;
  key.msg_bytes = 0;  // one table per test, one row per size
  if (group_ && *group_ == key) return;
  if (group_ && flags_.output.empty()) print(perftest_rule(group_->kind));
  group_ = key;
  group_banner_ = banner_(spec);
  if (flags_.output.empty())
    print(perftest_banner(group_banner_) + perftest_columns(spec.kind, flags_.report_gbits, duration_));
}

void PerftestReporter::ReportRuns(const std::vector<Run>& reports) {
  if (inner_) inner_->ReportRuns(reports);
  double peak_gbps = 0;
  for (const auto& r : reports) {
    const auto it = r.counters.find("Gbps");
    if (r.run_type == Run::RT_Iteration && !r.error_occurred && it != r.counters.end())
      peak_gbps = std::max(peak_gbps, it->second.value);
  }
  for (const auto& r : reports) {
    if (r.run_type != Run::RT_Iteration) continue;
    const TestSpec* spec = spec_of(r);
    if (spec == nullptr) continue;
    if (r.error_occurred) {
      if (!inner_) GetErrorStream() << " " << r.benchmark_name() << ": " << r.error_message << "\n";
      continue;
    }
    start_group(*spec);
    if (spec->kind == Kind::kBandwidth) report_bw(*spec, r, peak_gbps);
    else report_lat(*spec, r);
    ++rows_;
  }
}

void PerftestReporter::report_bw(const TestSpec& spec, const Run& run, double peak_gbps) {
  auto counter = [&run](const char* name) {
    const auto it = run.counters.find(name);
    return it == run.counters.end() ? 0.0 : it->second.value;
  };
  const bool gbits = flags_.report_gbits;
  PerftestBwRow row{spec.msg_bytes, static_cast<std::uint64_t>(run.iterations),
                    flags_.no_peak ? 0 : perftest_bw_unit(peak_gbps, gbits), perftest_bw_unit(counter("Gbps"), gbits),
                    counter("Mmsgps")};
  check_limits(spec, row);
  const std::string json = perftest_json_bw(row, flags_.output);
  json_rows_.push_back(json);
  json_last_ = json;
  if (flags_.output == "bandwidth") return print(fmt::sprintf("%f\n", row.average));
  if (flags_.output == "message_rate") return print(fmt::sprintf("%f\n", row.msg_rate_mpps));
  print(perftest_bw_row(row, gbits));
  print_counters(run);
  if (flags_.report_both && spec.bidirectional) {
    // perftest's sections after the sum: this end's sending ("Local", the
    // leader's own timing), then the other end's ("Remote", its timing).
    for (const auto& [title, dir] : {std::pair{"Local", "tx_Gbps"}, std::pair{"Remote", "rx_Gbps"}}) {
      PerftestBwRow d = row;
      d.average = perftest_bw_unit(counter(dir), gbits);
      d.peak = flags_.no_peak ? 0 : d.average;
      d.msg_rate_mpps = counter(dir) * 1e9 / 8 / static_cast<double>(spec.msg_bytes) / 1e6;
      print(perftest_rule(spec.kind) + fmt::format("\n {} results: \n", title) + perftest_rule(spec.kind) +
            perftest_columns(spec.kind, gbits, false) + perftest_bw_row(d, gbits));
    }
  }
}

void PerftestReporter::report_lat(const TestSpec& spec, const Run& run) {
  auto counter = [&run](const char* name) {
    const auto it = run.counters.find(name);
    return it == run.counters.end() ? 0.0 : it->second.value;
  };
  PerftestLatRow row{spec.msg_bytes,       static_cast<std::uint64_t>(run.iterations),
                     counter("min_us"),    counter("max_us"),
                     counter("p50_us"),    counter("mean_us"),
                     counter("stddev_us"), counter("p99_us"),
                     counter("p99.9_us")};
  const std::string json = perftest_json_lat(row, flags_.output);
  json_rows_.push_back(json);
  json_last_ = json;
  if (flags_.output == "latency") return print(fmt::sprintf("%f\n", row.average));
  if ((flags_.histogram || flags_.unsorted) && samples_ != nullptr) {
    const double k = (reports_half_rtt(spec.op) ? 0.5 : 1.0) / 1e3;
    std::vector<double> us;
    us.reserve(samples_->size());
    for (double ns : samples_->values()) us.push_back(ns * k);
    if (!flags_.unsorted) std::sort(us.begin(), us.end());
    print(perftest_samples(us) + perftest_rule(spec.kind) + perftest_columns(spec.kind, false, duration_));
  }
  if (duration_) {
    // The manual time of write/send is half the round trips' (one-way latency); tps counts round trips.
    const double seconds = run.real_accumulated_time * (reports_half_rtt(spec.op) ? 2 : 1);
    print(perftest_lat_duration_row(row, seconds));
    return print_counters(run);
  }
  print(perftest_lat_row(row));
  print_counters(run);
}

void PerftestReporter::print_counters(const Run& run) {
  if (flags_.report_counters.empty()) return;
  // This end's changes ("ctr:NAME", set_counter_deltas), under the names the
  // user gave; a counter that did not move (or does not exist) prints 0.
  std::vector<std::pair<std::string, std::int64_t>> named;
  for (const auto& want : harness::split_counter_list(flags_.report_counters)) {
    std::int64_t value = 0;
    for (const auto& [key, counter] : run.counters) {
      if (!key.starts_with(kCounterPrefix)) continue;
      if (harness::counter_selected(std::string_view(key).substr(kCounterPrefix.size()), {want})) {
        value = static_cast<std::int64_t>(counter.value);
        break;
      }
    }
    named.emplace_back(want, value);
  }
  print(perftest_counters(named));
}

void PerftestReporter::check_limits(const TestSpec& spec, const PerftestBwRow& row) {
  const char* unit = flags_.report_gbits ? "Gb/sec" : "MB/sec";
  if (flags_.limit_bw >= 0 && row.average < flags_.limit_bw) {
    failures_.push_back(fmt::format("{}: BW average {:.2f} {} is below the -w limit {:g}", spec.name(), row.average,
                                    unit, flags_.limit_bw));
  }
  if (flags_.limit_msgrate >= 0 && row.msg_rate_mpps < flags_.limit_msgrate) {
    failures_.push_back(fmt::format("{}: MsgRate {:.6f} Mpps is below the -y limit {:g}", spec.name(),
                                    row.msg_rate_mpps, flags_.limit_msgrate));
  }
}

void PerftestReporter::Finalize() {
  if (inner_) inner_->Finalize();
  if (group_ && flags_.output.empty()) print(perftest_rule(group_->kind));
  group_.reset();
  if (flags_.out_json && !json_rows_.empty()) {
    std::ofstream f(flags_.json_path());
    f << perftest_json(group_banner_, json_last_, json_rows_);
    if (!f) failures_.push_back(fmt::format("--out_json: cannot write {}", flags_.json_path()));
  }
}

}  // namespace fabench::pair
