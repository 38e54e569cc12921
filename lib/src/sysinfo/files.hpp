// Reading sysfs the way the interconnect record needs (sysinfo/record.hpp): a missing or
// unreadable file is an empty fact, never an error. sysfs refuses some reads of files that
// exist (gid_attrs/types of an unused GID entry: EINVAL); those read as empty too.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fabench/sysinfo/record.hpp"

namespace fabench::sysinfo::detail {

namespace fs = std::filesystem;

// The first line of `path` without trailing white space; "" when it cannot be read.
[[nodiscard]] std::string read_line(const fs::path& path);
// read_line as a whole number; none when empty or not a number.
[[nodiscard]] std::optional<long> read_number(const fs::path& path);
// The names in directory `dir` (following a link to it), in natural order (mlx5_2 before
// mlx5_10, GID 2 before 10: decimal; PCI addresses, hex, want plain text order); none when it
// is not there.
[[nodiscard]] std::vector<std::string> entries(const fs::path& dir);
// "4: ACTIVE" -> "ACTIVE" (sysfs's port state and phys_state); other text as it is.
[[nodiscard]] std::string after_colon(std::string_view text);
// The PCI function that `link` (a device's "device" link, or /sys/bus/pci/devices/<address>)
// resolves to below root/sys/devices; none when it resolves elsewhere or is not a PCI address.
[[nodiscard]] std::optional<PciLink> read_pci(const fs::path& root, const fs::path& link);

// The parts of the record read in their own files (read.cpp puts them together).
[[nodiscard]] Port read_port(const fs::path& root, const fs::path& device_dir, unsigned num);
[[nodiscard]] std::vector<Gpu> read_gpus(const fs::path& root);
[[nodiscard]] std::vector<Distance> distances(const std::vector<Gpu>& gpus, const std::vector<RdmaDevice>& devices);
[[nodiscard]] Software read_software(const fs::path& root);

}  // namespace fabench::sysinfo::detail
