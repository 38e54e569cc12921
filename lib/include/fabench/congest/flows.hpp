// The congestor patterns (GPCNeT's, plus operators' N:1 incast) as flows between ranks: who
// sends to whom, with which operation. Congestors run their flows back to back for the whole
// loaded phase; the bytes per operation are --congestor-size (4 KiB by default, GPCNeT's).
//   incast         every other congestor sends (two-sided) to the target
//   put-incast     every other congestor RDMA-writes into the target
//   get-broadcast  every other congestor RDMA-reads from the target (the target's port sends)
//   all-to-all     every congestor writes to every other congestor
// The target is a congestor: --target RANK, else the lowest congestor rank. `--pattern incast
// --ratio N:1` is N senders into one target, the PFC/DCQCN validation operators run.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fabench/congest/roles.hpp"

namespace fabench::congest {

enum class Pattern : std::uint8_t { kIncast, kPutIncast, kGetBroadcast, kAllToAll };
enum class FlowOp : std::uint8_t { kSend, kWrite, kRead };

struct Flow {
  std::uint32_t initiator;  // posts the operation
  std::uint32_t peer;       // the other end (receives a send or write, serves a read)
  FlowOp op;
  friend bool operator==(const Flow&, const Flow&) = default;
};

[[nodiscard]] std::string_view pattern_name(Pattern p);  // "incast", "put-incast", ...
[[nodiscard]] std::string_view flow_op_name(FlowOp op);  // "send", "write", "read"
// "incast,all-to-all" (or "all") -> patterns in the order given; UserError on an unknown name or
// a repeat, naming the known ones.
[[nodiscard]] std::vector<Pattern> parse_patterns(std::string_view list);
// "N:1" -> N (N >= 1); UserError otherwise.
[[nodiscard]] std::uint32_t parse_ratio(std::string_view ratio);

// The flows of `p` among roles.congestors toward `target` (a congestor). `senders`: how many
// of the other congestors take part in an incast pattern (0: all of them; --ratio), the lowest
// ranks after the target first. UserError when the target is not a congestor or senders
// exceeds the congestors there are.
[[nodiscard]] std::vector<Flow> congestor_flows(Pattern p, const Roles& roles, std::uint32_t target,
                                                std::uint32_t senders = 0);

// The ranks whose port receives the pattern's bytes: the incast target, or for get-broadcast
// the readers (the target's port sends); every congestor for all-to-all.
[[nodiscard]] std::vector<std::uint32_t> receiving_ranks(const std::vector<Flow>& flows);

}  // namespace fabench::congest
