#include "fabench/epbench/engine.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fabench/ep/error.hpp"
#include "fabench/harness/clock.hpp"
#include "fabench/verbs/error.hpp"

namespace fabench::epbench {

namespace {

constexpr std::uint64_t kAlign = 64;

std::uint64_t align_up(std::uint64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

std::uint64_t pair_dispatch_bytes(const ep::EpPlan& plan, std::uint32_t s, std::uint32_t d, std::uint32_t local_experts) {
  const std::uint64_t header = plan.config.mode == ep::Mode::kLowLatency ? 4ull * local_experts : 0;
  return header + std::uint64_t{plan.ranks[s].copies_to[d]} * plan.config.dispatch_bytes();
}

}  // namespace

Layout layout_of(const ep::EpPlan& plan, std::uint32_t r) {
  const std::uint32_t n = plan.config.ranks;
  const ep::Placement place(plan.config.shape.experts, n);
  const std::uint64_t bc = plan.config.combine_bytes();
  Layout l;
  std::uint64_t at = 0;
  const auto area = [&](std::vector<std::uint64_t>& offs, auto bytes_of) {
    offs.resize(n);
    for (std::uint32_t q = 0; q < n; ++q) {
      offs[q] = at;
      at += align_up(bytes_of(q));
    }
  };
  area(l.send, [&](std::uint32_t d) { return pair_dispatch_bytes(plan, r, d, place.count(d)); });
  for (auto& recv : l.recv) area(recv, [&](std::uint32_t s) { return pair_dispatch_bytes(plan, s, r, place.count(r)); });
  area(l.reply, [&](std::uint32_t s) { return std::uint64_t{plan.ranks[s].copies_to[r]} * bc; });
  for (auto& back : l.back) area(back, [&](std::uint32_t d) { return std::uint64_t{plan.ranks[r].copies_to[d]} * bc; });
  l.total = std::max<std::uint64_t>(at, kAlign);
  return l;
}

std::uint64_t arena_bytes(const ep::EpPlan& plan) {
  std::uint64_t most = 0;
  for (std::uint32_t r = 0; r < plan.config.ranks; ++r) most = std::max(most, layout_of(plan, r).total);
  return most;
}

Engine::Engine(const world::World& world, const ep::EpPlan& plan, ep::Exchange exchange, bool reference)
    : world_(world), plan_(plan), ex_(std::move(exchange)), place_(plan.config.shape.experts, plan.config.ranks),
      self_(world.rank()), n_(world.size()), base_(world.arena().data()), reference_(reference) {
  for (std::uint32_t r = 0; r < n_; ++r) layouts_.push_back(layout_of(plan, r));
  if (layouts_[self_].total > world.arena().length()) ep::fail("fabench-ep: the arena is smaller than the plan's layout");
  // Peers from self + 1 on, wrapping (as fabench-coll's all-at-once all-to-all): writes are
  // posted in this order, so not every rank writes to rank 0 first.
  for (std::uint32_t i = 1; i < n_; ++i) {
    const std::uint32_t q = (self_ + i) % n_;
    others_.push_back(q);
    if (plan.ranks[self_].copies_to[q] > 0) send_to_.push_back(q);
    if (plan.ranks[q].copies_to[self_] > 0) recv_from_.push_back(q);
  }
  for (auto& parity : mailbox_) {
    for (auto& phase : parity) phase.assign(n_, 0);
  }
  Layout& me = layouts_[self_];
  for (std::uint32_t d = 0; d < n_; ++d) {
    if (dispatch_bytes(self_, d) > 0x7fffffffull || dispatch_bytes(d, self_) > 0x7fffffffull) {
      ep::fail("fabench-ep: one rank's copies to another exceed 2 GiB (one write); fewer --tokens");
    }
    ex_.pack_dispatch(d, {base_ + me.send[d], dispatch_bytes(self_, d)});
  }
}

std::uint64_t Engine::dispatch_bytes(std::uint32_t s, std::uint32_t d) const {
  return pair_dispatch_bytes(plan_, s, d, place_.count(d));
}

std::uint64_t Engine::reply_bytes(std::uint32_t s, std::uint32_t d) const {
  return std::uint64_t{plan_.ranks[s].copies_to[d]} * plan_.config.combine_bytes();
}

std::string copies_matrix(const ep::EpPlan& plan, const std::string& bench) {
  const std::uint32_t n = plan.config.ranks;
  const ep::Placement place(plan.config.shape.experts, n);
  std::string out;
  for (std::uint32_t s = 0; s < n; ++s) {
    out += fmt::format("copies {} ep {} src {}: {}\n", bench, n, s, fmt::join(plan.ranks[s].copies_to, " "));
  }
  const std::uint64_t header = plan.config.mode == ep::Mode::kLowLatency ? 4ull * place.max_count() : 0;
  out += fmt::format("bytes {} ep {}: dispatch_per_copy {} combine_per_copy {} header_per_destination_max {}\n", bench, n,
                     plan.config.dispatch_bytes(), plan.config.combine_bytes(), header);
  return out;
}

}  // namespace fabench::epbench
