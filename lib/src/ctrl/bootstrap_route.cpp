// Bootstrap::route(): point-to-point pieces through rank 0 (bootstrap.hpp).
// Kept apart from bootstrap.cpp, which holds the rendezvous and the
// collectives that route() builds on (exchange()).
#include <fmt/format.h>

#include <span>

#include "fabench/ctrl/bootstrap.hpp"

namespace fabench::ctrl {

using std::chrono::milliseconds;

// Routed pieces travel as Gather data: repeated [u32 rank][u32 bytes][bytes],
// the rank being the destination on the way in and the source on the way out.
namespace {

void pack_piece(std::vector<std::uint8_t>& out, std::uint32_t rank, std::span<const std::uint8_t> bytes) {
  for (std::uint32_t v : {rank, static_cast<std::uint32_t>(bytes.size())}) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  out.insert(out.end(), bytes.begin(), bytes.end());
}

// Calls f(rank, bytes) per piece; false when the data does not parse or names a rank >= size.
template <typename F>
bool for_each_piece(std::span<const std::uint8_t> data, std::uint32_t size, F&& f) {
  std::size_t at = 0;
  auto u32 = [&](std::uint32_t& v) {
    if (data.size() - at < 4) return false;
    v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<std::uint32_t>(data[at + i]) << (8 * i);
    at += 4;
    return true;
  };
  while (at < data.size()) {
    std::uint32_t rank = 0;
    std::uint32_t n = 0;
    if (!u32(rank) || !u32(n) || rank >= size || data.size() - at < n) return false;
    f(rank, data.subspan(at, n));
    at += n;
  }
  return true;
}

}  // namespace

std::vector<Message> Bootstrap::fan_out_routed(std::vector<Message>& all, const std::string& what) {
  const std::uint32_t size = config_.size;
  std::vector<std::vector<std::uint8_t>> to(size);
  for (std::uint32_t src = 0; src < size; ++src) {
    const auto& g = std::get<Gather>(all[src]);
    const bool ok = for_each_piece(
        g.data, size, [&](std::uint32_t dst, std::span<const std::uint8_t> bytes) { pack_piece(to[dst], src, bytes); });
    if (!ok)
      root_fail(CtrlError::Kind::kMalformed,
                fmt::format("{} sent unreadable pieces during {}", describe_rank(src), what));
  }
  const std::uint64_t epoch = std::get<Gather>(all[0]).epoch;
  for (std::uint32_t r = 1; r < size; ++r) {
    try {
      channels_[r]->send(Gather{epoch, r, std::move(to[r])}, config_.timeout);
    } catch (const CtrlError& e) {
      channels_[r].reset();
      root_fail(e.kind(), fmt::format("{} during {}", e.what(), what));
    }
  }
  return {Message(Gather{epoch, 0, std::move(to[0])})};
}

std::vector<std::vector<std::uint8_t>> Bootstrap::route(const std::vector<std::vector<std::uint8_t>>& outgoing,
                                                        milliseconds timeout) {
  if (outgoing.size() != config_.size) {
    throw CtrlError(CtrlError::Kind::kConfig,
                    fmt::format("route: {} pieces for {} ranks", outgoing.size(), config_.size));
  }
  const std::uint64_t epoch = ++epoch_;
  std::vector<std::vector<std::uint8_t>> in(config_.size);
  if (config_.size == 1) {
    in[0] = outgoing[0];
    return in;
  }
  std::vector<std::uint8_t> packed;
  for (std::uint32_t r = 0; r < config_.size; ++r) {
    if (!outgoing[r].empty()) pack_piece(packed, r, outgoing[r]);
  }
  const std::string what = fmt::format("route {}", epoch);
  auto mine = exchange(Gather{epoch, config_.rank, std::move(packed)}, what, timeout, true);
  const auto& g = std::get<Gather>(mine[0]);
  const bool ok = for_each_piece(g.data, config_.size, [&](std::uint32_t src, std::span<const std::uint8_t> bytes) {
    in[src].assign(bytes.begin(), bytes.end());
  });
  if (!ok)
    throw CtrlError(CtrlError::Kind::kMalformed,
                    fmt::format("{} sent unreadable pieces during {}", describe_rank(0), what));
  return in;
}

}  // namespace fabench::ctrl
