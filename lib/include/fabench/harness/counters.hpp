// Port and hw counters from sysfs: a snapshot of every counter a device
// exposes for one port, read outside any timed region, and the difference of
// two snapshots (what a benchmark moved). No verbs, no MADs: the kernel's
// sysfs files are what `perfquery`-less hosts and perftest's -W read too.
//
// Names are the files' names. Units are the kernel's:
//   - counters/port_xmit_data and counters/port_rcv_data count 4-byte words
//     (IBA PortCounters: octets divided by 4), so bytes = 4 x value
//     (kPortDataWordBytes); port_{xmit,rcv}_packets count packets;
//   - hw_counters are driver-defined (mlx5: out_of_sequence, np_cnp_sent,
//     rp_cnp_handled, np_ecn_marked_roce_packets, ...; rxe: sent_pkts,
//     rcvd_pkts, out_of_seq_request, duplicate_request, completer_retry_err,
//     ...), each a plain event count.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace fabench::harness {

inline constexpr const char* kSysfsInfiniband = "/sys/class/infiniband";
// counters/port_{xmit,rcv}_data count units of this many bytes.
inline constexpr std::uint64_t kPortDataWordBytes = 4;

using Counters = std::map<std::string, std::uint64_t>;
// What counter_deltas returns: the non-zero changes, by name.
using CounterDeltas = std::map<std::string, std::int64_t>;

// Every readable numeric file of ROOT/DEV/ports/PORT/counters and
// ROOT/DEV/ports/PORT/hw_counters (and ROOT/DEV/hw_counters, device-wide, if
// it exists), named as the file is; a hw counter whose name is also a port
// counter is named "hw_counters/NAME" (a device-wide hw counter whose name is
// taken by both is named "device/hw_counters/NAME"). Unreadable or
// non-numeric files are skipped, and so is hw_counters/lifespan (the driver's
// cache period in ms, a setting, not a counter); missing directories give an
// empty map. Never throws for a missing device (empty map).
[[nodiscard]] Counters read_port_counters(const std::string& device, std::uint8_t port,
                                          const std::filesystem::path& root = kSysfsInfiniband);

// after - before for names present in both, only the non-zero differences
// (signed: a counter that went down, reset or wrapped, shows as negative).
[[nodiscard]] std::map<std::string, std::int64_t> counter_deltas(const Counters& before, const Counters& after);

// What a counter is about, for reports that show a summary of many.
enum class CounterKind {
  kTraffic,     // bytes and packets moved (port_xmit_data, port_rcv_packets, sent_pkts, ...)
  kError,       // errors, drops, retransmissions, out-of-sequence, link events, xmit wait
  kCongestion,  // CNP / ECN (np_cnp_sent, rp_cnp_handled, np_ecn_marked_roce_packets, ...)
  kOther,       // anything else (multicast, VL15, per-opcode hw counters not listed)
};
// Classifies a counter by its name (as read_port_counters names it, the
// "hw_counters/" or "device/hw_counters/" prefix ignored) from the names
// mlx5, rxe, bnxt_re, irdma and the IBA port counters use.
[[nodiscard]] CounterKind counter_kind(std::string_view name);

// The default selection when the user names none: traffic (bytes and packets
// per direction) plus every error and congestion counter the device exposes.
[[nodiscard]] bool in_default_set(std::string_view name);

// Whether the user's selection keeps counter `name`: each entry of `wanted`
// matches a name exactly, or its last path component ("out_of_sequence"
// matches "hw_counters/out_of_sequence"), or with a leading "counters/" or
// "hw_counters/" removed ("counters/port_xmit_data", as perftest's -W may
// list it, matches "port_xmit_data"). Empty `wanted`: the default set.
[[nodiscard]] bool counter_selected(std::string_view name, const std::vector<std::string>& wanted);

// Splits "a,b, c" into {"a","b","c"} (empty entries dropped).
[[nodiscard]] std::vector<std::string> split_counter_list(std::string_view list);

}  // namespace fabench::harness
