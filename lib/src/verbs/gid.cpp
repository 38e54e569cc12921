// GID table from sysfs and the GID index choice.
#include "fabench/verbs/gid.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <filesystem>
#include <fstream>

#include <net/if.h>

#include <fmt/format.h>
#include <infiniband/verbs.h>

#include "fabench/verbs/error.hpp"

namespace fabench::verbs {
namespace fs = std::filesystem;

namespace {

// First line of a file, without the newline; nullopt if unreadable (the
// kernel returns EINVAL on reading gid_attrs of an unused slot).
std::optional<std::string> read_line(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r' || line.back() == ' ')) {
    line.pop_back();
  }
  return line;
}

std::optional<int> parse_index(std::string_view name) {
  int value = 0;
  const auto* end = name.data() + name.size();
  auto [ptr, ec] = std::from_chars(name.data(), end, value);
  if (ec != std::errc{} || ptr != end || value < 0) return std::nullopt;
  return value;
}

}  // namespace

std::string_view gid_type_name(GidType type) {
  switch (type) {
    case GidType::kIb: return "IB";
    case GidType::kRoceV1: return "RoCE v1";
    case GidType::kRoceV2: return "RoCE v2";
    case GidType::kUnknown: break;
  }
  return "unknown";
}

bool GidEntry::is_ipv4() const noexcept {
  for (int i = 0; i < 10; ++i) {
    if (gid[i] != 0) return false;
  }
  return gid[10] == 0xff && gid[11] == 0xff;
}

std::string GidEntry::address() const {
  if (is_ipv4()) return fmt::format("{}.{}.{}.{}", gid[12], gid[13], gid[14], gid[15]);
  return format_gid(gid);
}

const GidEntry* GidTable::find(int index) const noexcept {
  for (const auto& e : entries) {
    if (e.index == index) return &e;
  }
  return nullptr;
}

std::string GidTable::describe_valid() const {
  std::string out;
  for (const auto& e : entries) {
    if (!out.empty()) out += ", ";
    out += fmt::format("{} ({} {})", e.index, gid_type_name(e.type), e.address());
  }
  return out.empty() ? "none" : out;
}

std::string format_gid(const RawGid& gid) {
  std::string out;
  out.reserve(39);
  for (int i = 0; i < 16; i += 2) {
    if (i != 0) out += ':';
    out += fmt::format("{:02x}{:02x}", gid[i], gid[i + 1]);
  }
  return out;
}

std::optional<RawGid> parse_gid(std::string_view text) {
  RawGid gid{};
  int group = 0;
  bool consumed_all = false;
  while (group < 8) {
    const auto colon = text.find(':');
    const std::string_view part = text.substr(0, colon);
    if (part.empty() || part.size() > 4) return std::nullopt;
    unsigned value = 0;
    auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), value, 16);
    if (ec != std::errc{} || ptr != part.data() + part.size()) return std::nullopt;
    gid[group * 2] = static_cast<std::uint8_t>(value >> 8);
    gid[group * 2 + 1] = static_cast<std::uint8_t>(value & 0xff);
    ++group;
    if (colon == std::string_view::npos) {
      consumed_all = true;
      break;
    }
    text.remove_prefix(colon + 1);
  }
  // Exactly 8 groups and nothing after the eighth.
  if (group != 8 || !consumed_all) return std::nullopt;
  return gid;
}

bool is_zero_gid(const RawGid& gid) noexcept {
  return std::all_of(gid.begin(), gid.end(), [](std::uint8_t b) { return b == 0; });
}

GidTable read_gid_table(std::string_view sysfs_root, std::string_view device, std::uint8_t port) {
  GidTable table;
  table.device = std::string(device);
  table.port = port;
  const fs::path port_dir = fs::path(sysfs_root) / device / "ports" / std::to_string(port);
  std::error_code ec;
  if (!fs::is_directory(port_dir / "gids", ec)) {
    throw VerbsError("read_gid_table", ENOENT, fmt::format("no GID table at {}", (port_dir / "gids").string()));
  }
  const auto ll = read_line(port_dir / "link_layer");
  table.link_layer = (ll && *ll == "Ethernet") ? IBV_LINK_LAYER_ETHERNET : IBV_LINK_LAYER_INFINIBAND;

  for (const auto& dirent : fs::directory_iterator(port_dir / "gids", ec)) {
    const auto index = parse_index(dirent.path().filename().string());
    if (!index) continue;
    const auto text = read_line(dirent.path());
    if (!text) continue;
    const auto gid = parse_gid(*text);
    if (!gid || is_zero_gid(*gid)) continue;
    const auto type_text = read_line(port_dir / "gid_attrs" / "types" / std::to_string(*index));
    GidEntry entry;
    entry.index = *index;
    entry.gid = *gid;
    if (!type_text) {
      // Kernels before gid_attrs (4.9) had IB / RoCE v1 only.
      if (fs::exists(port_dir / "gid_attrs" / "types", ec)) continue;
      entry.type = table.link_layer == IBV_LINK_LAYER_ETHERNET ? GidType::kRoceV1 : GidType::kIb;
    } else if (*type_text == "RoCE v2") {
      entry.type = GidType::kRoceV2;
    } else if (*type_text == "IB/RoCE v1" || *type_text == "RoCE v1" || *type_text == "IB") {
      entry.type = table.link_layer == IBV_LINK_LAYER_ETHERNET ? GidType::kRoceV1 : GidType::kIb;
    } else {
      entry.type = GidType::kUnknown;
    }
    if (auto ndev = read_line(port_dir / "gid_attrs" / "ndevs" / std::to_string(*index))) {
      entry.ndev = *ndev;
    }
    table.entries.push_back(std::move(entry));
  }
  if (ec) {
    throw VerbsError("read_gid_table", ec.value(), (port_dir / "gids").string());
  }
  std::sort(table.entries.begin(), table.entries.end(),
            [](const GidEntry& a, const GidEntry& b) { return a.index < b.index; });
  return table;
}

GidTable query_gid_table(ibv_context* context, std::uint8_t port) {
  GidTable table;
  table.device = ibv_get_device_name(context->device);
  table.port = port;
  ibv_port_attr attr{};
  check_rc(ibv_query_port(context, port, &attr), "ibv_query_port", fmt::format("{} port {}", table.device, port));
  table.link_layer = attr.link_layer == IBV_LINK_LAYER_ETHERNET ? IBV_LINK_LAYER_ETHERNET : IBV_LINK_LAYER_INFINIBAND;
  ibv_device_attr dev{};
  check_rc(ibv_query_device(context, &dev), "ibv_query_device", table.device);
  // The call fills entries for all ports; size for the whole device.
  const std::size_t max_entries = static_cast<std::size_t>(std::max(attr.gid_tbl_len, 1)) *
                                  std::max<std::size_t>(dev.phys_port_cnt, 1);
  std::vector<ibv_gid_entry> raw(max_entries);
  const ssize_t n = ibv_query_gid_table(context, raw.data(), raw.size(), 0);
  if (n < 0) check_rc(static_cast<int>(n), "ibv_query_gid_table", table.device);
  for (ssize_t i = 0; i < n; ++i) {
    const ibv_gid_entry& r = raw[static_cast<std::size_t>(i)];
    if (r.port_num != port) continue;
    GidEntry e;
    e.index = static_cast<int>(r.gid_index);
    std::copy(std::begin(r.gid.raw), std::end(r.gid.raw), e.gid.begin());
    if (is_zero_gid(e.gid)) continue;
    switch (r.gid_type) {
      case IBV_GID_TYPE_IB: e.type = GidType::kIb; break;
      case IBV_GID_TYPE_ROCE_V1: e.type = GidType::kRoceV1; break;
      case IBV_GID_TYPE_ROCE_V2: e.type = GidType::kRoceV2; break;
      default: e.type = GidType::kUnknown; break;
    }
    char ndev[IF_NAMESIZE] = {};
    if (r.ndev_ifindex != 0 && if_indextoname(r.ndev_ifindex, ndev) != nullptr) e.ndev = ndev;
    table.entries.push_back(std::move(e));
  }
  std::sort(table.entries.begin(), table.entries.end(),
            [](const GidEntry& a, const GidEntry& b) { return a.index < b.index; });
  return table;
}

GidTable load_gid_table(ibv_context* context, std::uint8_t port, std::string_view sysfs_root) {
  const std::string_view name = ibv_get_device_name(context->device);
  const auto have_sysfs = [&] {
    std::error_code ec;
    return fs::is_directory(fs::path(sysfs_root) / name, ec);
  };
  // The kernel's own table: one ioctl, where sysfs takes a file per slot
  // (1024 on rxe, read a few times by every process at start). sysfs is the
  // fallback, and the source for another root (the tests' fake trees).
  if (sysfs_root == kSysfsInfiniband) {
    try {
      return query_gid_table(context, port);
    } catch (const VerbsError&) {
      if (!have_sysfs()) throw;
    }
  } else if (!have_sysfs()) {
    return query_gid_table(context, port);
  }
  return read_gid_table(sysfs_root, name, port);
}

const GidEntry& choose_gid(const GidTable& table, std::uint8_t link_layer, int preferred, bool ipv6) {
  const auto where = fmt::format("{} port {}", table.device, table.port);
  if (preferred >= 0) {
    if (const GidEntry* e = table.find(preferred)) return *e;
    throw VerbsError(
        "choose_gid", EINVAL,
        fmt::format("GID index {} is not valid on {}; valid indexes: {}", preferred, where, table.describe_valid()));
  }
  if (link_layer == IBV_LINK_LAYER_ETHERNET && ipv6) {
    const GidEntry* link_local = nullptr;
    for (const auto& e : table.entries) {
      if (e.type != GidType::kRoceV2 || e.is_ipv4()) continue;
      if (!e.is_link_local()) return e;
      if (link_local == nullptr) link_local = &e;
    }
    if (link_local != nullptr) return *link_local;
    throw VerbsError("choose_gid", ENOENT,
                     fmt::format("--ipv6: no RoCE v2 GID with an IPv6 address on {}; valid indexes: {}", where,
                                 table.describe_valid()));
  }
  if (link_layer == IBV_LINK_LAYER_ETHERNET) {
    const GidEntry* v2 = nullptr;
    const GidEntry* v1 = nullptr;
    for (const auto& e : table.entries) {
      if (e.type == GidType::kRoceV2) {
        if (e.is_ipv4()) return e;
        if (v2 == nullptr) v2 = &e;
      } else if (e.type == GidType::kRoceV1 && v1 == nullptr) {
        v1 = &e;
      }
    }
    if (v2 != nullptr) return *v2;
    if (v1 != nullptr) return *v1;
    throw VerbsError("choose_gid", ENOENT,
                     fmt::format("no RoCE GID on {}; is an IP address configured on its netdev? "
                                 "valid indexes: {}",
                                 where, table.describe_valid()));
  }
  if (const GidEntry* e = table.find(0)) return *e;
  throw VerbsError("choose_gid", ENOENT,
                   fmt::format("GID index 0 missing on {}; valid indexes: {}", where, table.describe_valid()));
}

}  // namespace fabench::verbs
