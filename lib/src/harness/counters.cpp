// Port and hw counters from sysfs (see counters.hpp).
#include "fabench/harness/counters.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <fstream>
#include <optional>
#include <sstream>
#include <system_error>

#include "fabench/base/text.hpp"

namespace fabench::harness {
namespace {

namespace fs = std::filesystem;

// The file's whole content as an unsigned decimal, surrounding whitespace
// allowed; nullopt for anything else ("N/A", empty, a read error).
std::optional<std::uint64_t> read_number(const fs::path& file) {
  std::ifstream in(file);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return std::nullopt;
  const std::string s = text.str();
  std::size_t b = 0;
  std::size_t e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  if (b == e) return std::nullopt;
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(s.data() + b, s.data() + e, value);
  if (ec != std::errc{} || end != s.data() + e) return std::nullopt;
  return value;
}

// Every numeric regular file of `dir`, by file name, sorted (deterministic
// collision handling); a missing or unreadable directory gives nothing.
std::vector<std::pair<std::string, std::uint64_t>> read_dir(const fs::path& dir) {
  std::vector<std::pair<std::string, std::uint64_t>> out;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return out;
  for (const fs::directory_iterator end; it != end; it.increment(ec)) {
    if (ec) break;
    std::error_code fec;
    if (!it->is_regular_file(fec) || fec) continue;
    const std::string name = it->path().filename().string();
    if (name == "lifespan") continue;  // hw_counters' cache period (ms): a setting
    if (const auto v = read_number(it->path())) out.emplace_back(name, *v);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string_view strip_prefix(std::string_view name) {
  for (const std::string_view p : {"device/hw_counters/", "hw_counters/", "counters/"}) {
    if (name.starts_with(p)) return name.substr(p.size());
  }
  return name;
}

bool has_token(std::string_view name, std::string_view token) {
  std::size_t pos = 0;
  while (pos <= name.size()) {
    const std::size_t next = std::min(name.find('_', pos), name.size());
    if (name.substr(pos, next - pos) == token) return true;
    pos = next + 1;
  }
  return false;
}

}  // namespace

Counters read_port_counters(const std::string& device, std::uint8_t port, const fs::path& root) {
  Counters out;
  if (device.empty() || device.find('/') != std::string::npos) return out;
  const fs::path dev = root / device;
  const fs::path port_dir = dev / "ports" / std::to_string(port);
  for (auto& [name, v] : read_dir(port_dir / "counters")) out.emplace(name, v);
  for (auto& [name, v] : read_dir(port_dir / "hw_counters")) {
    out.emplace(out.contains(name) ? "hw_counters/" + name : name, v);
  }
  for (auto& [name, v] : read_dir(dev / "hw_counters")) {
    if (!out.contains(name)) {
      out.emplace(name, v);
    } else if (!out.contains("hw_counters/" + name)) {
      out.emplace("hw_counters/" + name, v);
    } else {
      out.emplace("device/hw_counters/" + name, v);
    }
  }
  return out;
}

std::map<std::string, std::int64_t> counter_deltas(const Counters& before, const Counters& after) {
  std::map<std::string, std::int64_t> out;
  for (const auto& [name, a] : after) {
    const auto it = before.find(name);
    if (it == before.end() || a == it->second) continue;
    // Modular difference read as signed: a counter that went down shows as negative.
    out.emplace(name, static_cast<std::int64_t>(a - it->second));
  }
  return out;
}

CounterKind counter_kind(std::string_view full_name) {
  const std::string name = to_lower(strip_prefix(full_name));
  static constexpr std::array<std::string_view, 14> kTraffic = {
      "port_xmit_data", "port_rcv_data",     "port_xmit_packets", "port_rcv_packets",  // IBA
      "sent_pkts",      "rcvd_pkts",                                                   // rxe
      "tx_pkts",        "rx_pkts",           "tx_bytes",          "rx_bytes",          // bnxt_re
      "tx_roce_pkts",   "rx_roce_good_pkts", "tx_roce_bytes",     "rx_roce_good_bytes"};
  if (std::find(kTraffic.begin(), kTraffic.end(), name) != kTraffic.end()) return CounterKind::kTraffic;
  if (name.find("cnp") != std::string::npos || name.find("ecn") != std::string::npos) {
    return CounterKind::kCongestion;
  }
  if (has_token(name, "err") || has_token(name, "error") || has_token(name, "errors")) return CounterKind::kError;
  static constexpr std::array<std::string_view, 15> kErrorParts = {
      "discard", "drop", "downed",        "retry",   "retrans",   "out_of_seq",   "duplicate",          "xmit_wait",
      "timeout", "nak",  "out_of_buffer", "overrun", "integrity", "slow_restart", "link_error_recovery"};
  for (const std::string_view part : kErrorParts) {
    if (name.find(part) != std::string::npos) return CounterKind::kError;
  }
  return CounterKind::kOther;
}

bool in_default_set(std::string_view name) { return counter_kind(name) != CounterKind::kOther; }

bool counter_selected(std::string_view name, const std::vector<std::string>& wanted) {
  if (wanted.empty()) return in_default_set(name);
  const std::size_t slash = name.rfind('/');
  const std::string_view last = slash == std::string_view::npos ? name : name.substr(slash + 1);
  for (const std::string& w : wanted) {
    if (w == name) return true;
    if (w.find('/') == std::string::npos) {
      if (w == last) return true;
    } else if (strip_prefix(w) == name) {
      return true;
    }
  }
  return false;
}

std::vector<std::string> split_counter_list(std::string_view list) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos <= list.size()) {
    const std::size_t next = std::min(list.find(',', pos), list.size());
    std::string_view item = list.substr(pos, next - pos);
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.front()))) item.remove_prefix(1);
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.back()))) item.remove_suffix(1);
    if (!item.empty()) out.emplace_back(item);
    pos = next + 1;
  }
  return out;
}

}  // namespace fabench::harness
