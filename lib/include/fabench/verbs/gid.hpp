// GID table: the valid entries of one port's GID table, read from sysfs
// (<root>/<dev>/ports/<port>/gids/<i>, gid_attrs/types/<i>, gid_attrs/ndevs/<i>),
// and the choice of the GID index a queue pair uses. Everything here works on
// a plain table, so the parsing and the choice are unit-tested against a fake
// sysfs tree without a device.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <infiniband/verbs.h>

namespace fabench::verbs {

inline constexpr std::string_view kSysfsInfiniband = "/sys/class/infiniband";

using RawGid = std::array<std::uint8_t, 16>;  // network byte order

enum class GidType { kIb, kRoceV1, kRoceV2, kUnknown };

[[nodiscard]] std::string_view gid_type_name(GidType type);  // "IB", "RoCE v1", "RoCE v2"

struct GidEntry {
  int index = 0;
  RawGid gid{};
  GidType type = GidType::kUnknown;
  std::string ndev;  // netdev behind a RoCE GID ("" on IB)

  // ::ffff:a.b.c.d, the form RoCE gives an IPv4 address.
  [[nodiscard]] bool is_ipv4() const noexcept;
  // fe80::/10, the address every IPv6 interface has.
  [[nodiscard]] bool is_link_local() const noexcept { return gid[0] == 0xfe && (gid[1] & 0xc0) == 0x80; }
  // "10.50.0.1" for IPv4-mapped GIDs, else the sysfs form.
  [[nodiscard]] std::string address() const;
};

struct GidTable {
  std::string device;
  std::uint8_t port = 1;
  std::uint8_t link_layer = 0;    // enum ibv_link_layer values; from sysfs link_layer
  std::vector<GidEntry> entries;  // valid (non-zero, typed) entries by index

  [[nodiscard]] const GidEntry* find(int index) const noexcept;
  // "0 (RoCE v1 fe80::...), 3 (RoCE v2 10.50.0.1)"
  [[nodiscard]] std::string describe_valid() const;
};

// "fe80:0000:0000:0000:b208:75ff:fe5f:b85e" (the sysfs form).
[[nodiscard]] std::string format_gid(const RawGid& gid);
// Parses the sysfs form (8 groups of 1-4 hex digits); nullopt if malformed.
[[nodiscard]] std::optional<RawGid> parse_gid(std::string_view text);
[[nodiscard]] bool is_zero_gid(const RawGid& gid) noexcept;

// Reads the table of <sysfs_root>/<device>/ports/<port>. Unused slots (zero
// GID, or a types file that cannot be read, which is how the kernel marks
// them) are skipped. "IB/RoCE v1" means IB on an InfiniBand port and RoCE v1
// on an Ethernet one. Throws VerbsError when the port directory is missing.
[[nodiscard]] GidTable read_gid_table(std::string_view sysfs_root, std::string_view device, std::uint8_t port);

// The same table through libibverbs (ibv_query_gid_table), for systems
// without the sysfs tree (some containers). Throws VerbsError.
[[nodiscard]] GidTable query_gid_table(ibv_context* context, std::uint8_t port);

// query_gid_table() for the system's own sysfs root (one ioctl; sysfs when
// that fails); for another root (a test's), sysfs when <sysfs_root>/<device>
// exists, else query_gid_table().
[[nodiscard]] GidTable load_gid_table(ibv_context* context, std::uint8_t port,
                                      std::string_view sysfs_root = kSysfsInfiniband);

// The GID index to use. preferred >= 0: that index, if valid (else VerbsError
// listing the valid ones). preferred < 0, automatic like perftest: on
// Ethernet a RoCE v2 GID with an IPv4-mapped address, else any RoCE v2, else
// RoCE v1; with `ipv6` (perftest's --ipv6) a RoCE v2 GID with an IPv6
// address instead, a global one before a link-local one, or nothing; on
// InfiniBand index 0. Throws when nothing fits.
[[nodiscard]] const GidEntry& choose_gid(const GidTable& table, std::uint8_t link_layer, int preferred = -1,
                                         bool ipv6 = false);

}  // namespace fabench::verbs
