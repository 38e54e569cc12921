// sysfs reading helpers of the interconnect record (files.hpp) and the PCI link of a device.
#include "files.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <system_error>

namespace fabench::sysinfo::detail {

std::string read_line(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return {};
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back())) != 0) line.pop_back();
  return line;
}

std::optional<long> read_number(const fs::path& path) {
  const std::string text = read_line(path);
  long out = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (text.empty() || ec != std::errc{} || ptr != text.data() + text.size()) return std::nullopt;
  return out;
}

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Natural order: runs of digits compare as numbers, the rest as text.
bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (is_digit(a[i]) && is_digit(b[j])) {
      std::size_t ie = i, je = j;
      while (ie < a.size() && is_digit(a[ie])) ++ie;
      while (je < b.size() && is_digit(b[je])) ++je;
      const auto na = std::string_view(a).substr(i, ie - i), nb = std::string_view(b).substr(j, je - j);
      if (na.size() != nb.size()) return na.size() < nb.size();  // device and GID names: no leading zeros
      if (na != nb) return na < nb;
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

// "0000:17:00.0": domain:bus:device.function, hex digits.
bool is_pci_address(const std::string& s) {
  if (s.size() != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.') return false;
  for (std::size_t k : {0, 1, 2, 3, 5, 6, 8, 9, 11}) {
    if (std::isxdigit(static_cast<unsigned char>(s[k])) == 0) return false;
  }
  return true;
}

std::optional<int> read_int(const fs::path& path) {
  const auto v = read_number(path);
  if (!v) return std::nullopt;
  return static_cast<int>(*v);
}

}  // namespace

std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    out.push_back(it->path().filename().string());
  }
  std::sort(out.begin(), out.end(), natural_less);
  return out;
}

std::string after_colon(std::string_view text) {
  const auto colon = text.find(": ");
  return std::string(colon == std::string_view::npos ? text : text.substr(colon + 2));
}

std::optional<PciLink> read_pci(const fs::path& root, const fs::path& link) {
  std::error_code ec;
  const fs::path real = fs::canonical(link, ec);
  if (ec) return std::nullopt;
  const fs::path devices = fs::canonical(root / "sys/devices", ec);
  if (ec) return std::nullopt;
  const fs::path rel = real.lexically_relative(devices);
  if (rel.empty() || *rel.begin() == ".." || !is_pci_address(real.filename().string())) return std::nullopt;
  PciLink p;
  p.address = real.filename().string();
  p.path = rel.generic_string();
  p.current_speed = read_line(real / "current_link_speed");
  p.current_width = read_int(real / "current_link_width");
  p.max_speed = read_line(real / "max_link_speed");
  p.max_width = read_int(real / "max_link_width");
  if (const auto numa = read_int(real / "numa_node"); numa && *numa >= 0) p.numa_node = numa;
  p.local_cpus = read_line(real / "local_cpulist");
  return p;
}

}  // namespace fabench::sysinfo::detail
