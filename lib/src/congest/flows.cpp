#include "fabench/congest/flows.hpp"

#include <algorithm>
#include <array>
#include <charconv>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fabench/base/error.hpp"

namespace fabench::congest {

namespace {

// By the enums' values.
constexpr std::array<std::string_view, 4> kPatternNames{"incast", "put-incast", "get-broadcast", "all-to-all"};
constexpr std::array<std::string_view, 3> kOpNames{"send", "write", "read"};

// The congestors other than the target, rotated to start after it, the first `senders` of them.
std::vector<std::uint32_t> others(const Roles& roles, std::uint32_t target, std::uint32_t senders) {
  std::vector<std::uint32_t> out;
  const auto& c = roles.congestors;
  const auto at = static_cast<std::size_t>(std::find(c.begin(), c.end(), target) - c.begin());
  for (std::size_t k = 1; k < c.size(); ++k) out.push_back(c[(at + k) % c.size()]);
  if (senders > out.size()) {
    throw UserError(
        fmt::format("--ratio {}:1 needs {} congestors besides the target; there are {}", senders, senders, out.size()));
  }
  if (senders > 0) out.resize(senders);
  return out;
}

}  // namespace

std::string_view pattern_name(Pattern p) { return kPatternNames.at(static_cast<std::size_t>(p)); }

std::string_view flow_op_name(FlowOp op) { return kOpNames.at(static_cast<std::size_t>(op)); }

std::vector<Pattern> parse_patterns(std::string_view list) {
  if (list == "all") return {Pattern::kIncast, Pattern::kPutIncast, Pattern::kGetBroadcast, Pattern::kAllToAll};
  std::vector<Pattern> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string_view name = list.substr(start, comma - start);
    const auto it = std::find(kPatternNames.begin(), kPatternNames.end(), name);
    if (it == kPatternNames.end()) {
      throw UserError(
          fmt::format("unknown congestor pattern \"{}\" (known: {}, or all)", name, fmt::join(kPatternNames, ", ")));
    }
    const auto p = static_cast<Pattern>(it - kPatternNames.begin());
    if (std::find(out.begin(), out.end(), p) != out.end()) {
      throw UserError(fmt::format("congestor pattern \"{}\" is named twice", name));
    }
    out.push_back(p);
    start = comma + 1;
  }
  return out;
}

std::uint32_t parse_ratio(std::string_view ratio) {
  const std::size_t colon = ratio.find(':');
  std::uint32_t n = 0;
  const std::string_view head = ratio.substr(0, colon);
  const auto [ptr, ec] = std::from_chars(head.data(), head.data() + head.size(), n);
  const bool ok = colon != std::string_view::npos && ratio.substr(colon + 1) == "1" && !head.empty() &&
                  ec == std::errc() && ptr == head.data() + head.size() && n >= 1;
  if (!ok) throw UserError(fmt::format("--ratio \"{}\" is not N:1 with N >= 1 senders into one target", ratio));
  return n;
}

std::vector<Flow> congestor_flows(Pattern p, const Roles& roles, std::uint32_t target, std::uint32_t senders) {
  const auto& c = roles.congestors;
  if (!std::binary_search(c.begin(), c.end(), target)) {
    throw UserError(fmt::format("the target rank {} is not a congestor (congestors: {})", target, rank_ranges(c)));
  }
  std::vector<Flow> flows;
  if (p == Pattern::kAllToAll) {
    for (const auto a : c) {
      for (const auto b : c) {
        if (a != b) flows.push_back({a, b, FlowOp::kWrite});
      }
    }
    return flows;
  }
  const FlowOp op = p == Pattern::kIncast ? FlowOp::kSend : (p == Pattern::kPutIncast ? FlowOp::kWrite : FlowOp::kRead);
  for (const auto r : others(roles, target, senders)) flows.push_back({r, target, op});
  return flows;
}

std::vector<std::uint32_t> receiving_ranks(const std::vector<Flow>& flows) {
  std::vector<std::uint32_t> out;
  for (const auto& f : flows) out.push_back(f.op == FlowOp::kRead ? f.initiator : f.peer);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace fabench::congest
