#include "fabench/ep/exchange.hpp"

#include <algorithm>
#include <cstring>

#include "fabench/coll/reduce.hpp"
#include "fabench/ep/error.hpp"

namespace fabench::ep {

Exchange::Exchange(const EpConfig& c, const Placement& place, std::uint32_t self, Routing routing)
    : c_(c), place_(place), self_(self), routing_(std::move(routing)) {
  if (c.ranks_per_node != 1) fail("fabench-ep moves data with --ranks-per-node 1 only (--plan counts any)");
  build_slots();
}

void Exchange::build_slots() {
  const std::uint32_t k = routing_.top_k;
  count_to_.assign(c_.ranks, 0);
  order_.assign(c_.ranks, {});
  slots_.assign(std::size_t{routing_.tokens} * k, Slot{0, kNone, 1.0f});
  if (c_.mode == Mode::kNormal) {
    for (std::uint32_t t = 0; t < routing_.tokens; ++t) {
      const auto ids = routing_.token(t);
      for (std::uint32_t j = 0; j < k; ++j) {
        const std::uint32_t d = place_.owner(ids[j]);
        const bool again = std::any_of(ids.begin(), ids.begin() + j, [&](std::uint16_t e) { return place_.owner(e) == d; });
        if (again) continue;
        slots_[std::size_t{t} * k + j] = {d, count_to_[d]++, 1.0f};
        order_[d].push_back(t * k + j);
      }
    }
    return;
  }
  std::vector<std::vector<std::uint32_t>> by_expert(c_.shape.experts);
  for (std::uint32_t t = 0; t < routing_.tokens; ++t) {
    for (std::uint32_t j = 0; j < k; ++j) by_expert[routing_.token(t)[j]].push_back(t * k + j);
  }
  for (std::uint32_t e = 0; e < c_.shape.experts; ++e) {
    const std::uint32_t d = place_.owner(e);
    for (const std::uint32_t code : by_expert[e]) {
      slots_[code] = {d, count_to_[d]++, expert_weight(code % k)};
      order_[d].push_back(code);
    }
  }
}

std::uint64_t Exchange::dispatch_region_bytes() const {
  const std::uint64_t b = c_.dispatch_bytes();
  if (c_.mode == Mode::kNormal) return std::uint64_t{routing_.tokens} * b;
  const std::uint64_t per_token = std::min<std::uint64_t>(routing_.top_k, place_.max_count());
  return 4ull * place_.max_count() + std::uint64_t{routing_.tokens} * per_token * b;
}

std::uint64_t Exchange::combine_region_bytes() const {
  const std::uint64_t per_token = c_.mode == Mode::kNormal ? 1 : std::min<std::uint64_t>(routing_.top_k, place_.max_count());
  return std::uint64_t{routing_.tokens} * per_token * c_.combine_bytes();
}

std::uint64_t Exchange::dispatch_bytes_to(std::uint32_t d) const {
  const std::uint64_t header = c_.mode == Mode::kLowLatency ? 4ull * place_.count(d) : 0;
  return header + std::uint64_t{count_to_[d]} * c_.dispatch_bytes();
}

void Exchange::pack_dispatch(std::uint32_t d, std::span<std::byte> out) const {
  const std::uint32_t k = routing_.top_k;
  const std::uint64_t b = c_.dispatch_bytes();
  std::size_t at = 0;
  if (c_.mode == Mode::kLowLatency) {
    std::vector<std::uint32_t> per(place_.count(d), 0);
    for (const std::uint32_t code : order_[d]) ++per[routing_.token(code / k)[code % k] - place_.first(d)];
    std::memcpy(out.data(), per.data(), per.size() * 4);
    at = per.size() * 4;
  }
  for (const std::uint32_t code : order_[d]) {
    const std::uint32_t t = code / k;
    const std::uint32_t tag = c_.mode == Mode::kNormal ? d : routing_.token(t)[code % k];
    write_token(out.subspan(at, b), {self_, t, tag}, routing_.token(t));
    at += b;
  }
}

std::int64_t Exchange::low_latency_copies(std::span<const std::byte> region) const {
  const std::uint32_t local = place_.count(self_);
  if (region.size() < 4ull * local) return -1;
  std::int64_t total = 0;
  for (std::uint32_t el = 0; el < local; ++el) {
    std::uint32_t n = 0;
    std::memcpy(&n, region.data() + 4ull * el, 4);
    if (n > routing_.tokens) return -1;
    total += n;
  }
  return 4ull * local + static_cast<std::uint64_t>(total) * c_.dispatch_bytes() <= region.size() ? total : -1;
}

namespace {

// The copy's header against what this rank expects of it.
bool header_fits(const ReadToken& rt, std::uint32_t s, std::uint32_t tag, std::uint32_t tokens, std::uint32_t k,
                 std::uint32_t experts) {
  if (rt.id.source != s || rt.id.tag != tag || rt.id.token >= tokens || rt.top_k != k) return false;
  return std::all_of(rt.ids, rt.ids + k, [&](std::uint16_t e) { return e < experts; });
}

}  // namespace

std::uint64_t Exchange::receive_dispatch(std::uint32_t s, std::span<const std::byte> region, std::uint32_t copies,
                                         std::span<std::byte> reply, std::uint64_t* replied) const {
  const std::uint64_t b = c_.dispatch_bytes();
  const std::uint64_t bc = c_.combine_bytes();
  const std::uint32_t k = routing_.top_k;
  const std::uint32_t first = place_.first(self_);
  const std::uint32_t local = place_.count(self_);
  std::uint64_t header = 0;
  std::vector<std::uint32_t> per(1, copies);
  if (c_.mode == Mode::kLowLatency) {
    if (low_latency_copies(region) < 0) {
      *replied = 0;
      return 1;
    }
    per.assign(local, 0);
    std::memcpy(per.data(), region.data(), 4ull * local);
    header = 4ull * local;
  }
  std::uint64_t bad = 0, i = 0;
  std::vector<float> acc(c_.shape.hidden);
  std::vector<std::uint16_t> out(c_.shape.hidden);
  for (std::uint32_t group = 0; group < per.size(); ++group) {
    std::int64_t last = -1;
    for (std::uint32_t n = 0; n < per[group]; ++n, ++i) {
      const std::uint32_t tag = c_.mode == Mode::kNormal ? self_ : first + group;
      ReadToken rt;
      const bool ok = read_token(region.subspan(header + i * b, b), rt) && header_fits(rt, s, tag, routing_.tokens, k, c_.shape.experts) &&
                      static_cast<std::int64_t>(rt.id.token) > last &&
                      std::any_of(rt.ids, rt.ids + k, [&](std::uint16_t e) { return e >= first && e < first + local; });
      std::fill(acc.begin(), acc.end(), 0.0f);
      if (ok) {
        last = rt.id.token;
        const std::span<const std::uint16_t> ids(rt.ids, k);
        if (c_.mode == Mode::kNormal) {
          add_weighted_outputs(acc, rt.id, ids, [&](std::uint16_t e) { return e >= first && e < first + local; });
        } else {
          add_expert_output(acc, rt.id, tag, 1.0f, k);
        }
      }
      bad += ok ? 0 : 1;
      to_bf16(acc, out);
      std::memcpy(reply.data() + i * bc, out.data(), bc);
    }
  }
  *replied = i * bc;
  return bad;
}

bool Exchange::combine_token(std::uint32_t t, std::span<const std::span<const std::byte>> replies, std::vector<float>& acc,
                             std::vector<std::uint16_t>& want, std::vector<std::uint16_t>& got) const {
  const std::uint32_t k = routing_.top_k;
  const std::uint64_t bc = c_.combine_bytes();
  std::fill(acc.begin(), acc.end(), 0.0f);
  for (std::uint32_t j = 0; j < k; ++j) {
    const Slot& sl = slots_[std::size_t{t} * k + j];
    if (sl.index == kNone) continue;
    const std::span<const std::byte> r = replies[sl.rank];
    if ((std::uint64_t{sl.index} + 1) * bc > r.size()) return false;
    std::memcpy(got.data(), r.data() + sl.index * bc, bc);
    for (std::size_t i = 0; i < acc.size(); ++i) acc[i] += sl.weight * coll::bf16_to_float(got[i]);
  }
  to_bf16(acc, got);
  expected_output(want, {self_, t, 0}, routing_.token(t));
  return want == got;
}

}  // namespace fabench::ep
