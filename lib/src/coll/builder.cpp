#include "fabench/coll/builder.hpp"

#include <stdexcept>
#include <string>
#include <utility>

#include "fabench/base/error.hpp"

namespace fabench::coll {

std::uint64_t block_begin(std::uint64_t count, std::uint64_t nblocks, std::uint64_t b) {
  // floor(b * count / nblocks) without forming b * count: count = q * nblocks + r, so
  // b * count / nblocks = b * q + b * r / nblocks, and b * r < nblocks^2 is small.
  const std::uint64_t q = count / nblocks;
  const std::uint64_t r = count % nblocks;
  return b * q + b * r / nblocks;
}

ScheduleBuilder::ScheduleBuilder(Schedule meta, std::size_t num_steps) : s_(std::move(meta)), num_steps_(num_steps) {
  s_.writes.clear();
  s_.expect_from.clear();
  s_.ops.clear();
  s_.step_ends.clear();
}

void ScheduleBuilder::check_step(std::size_t step) const {
  if (step >= num_steps_) {
    throw RunError("schedule builder: step " + std::to_string(step) + " beyond the call's " +
                   std::to_string(num_steps_) + " steps");
  }
}

void ScheduleBuilder::write(std::size_t step, std::uint32_t dst_rank, Region src, Region dst, std::uint64_t bytes) {
  if (bytes == 0) return;
  check_step(step);
  s_.writes.push_back(Transfer{src.offset, dst.offset, bytes, dst_rank, src.buf, dst.buf});
  write_steps_.push_back(static_cast<std::uint32_t>(step));
}

void ScheduleBuilder::expect(std::size_t step, std::uint32_t src_rank, std::uint64_t bytes) {
  if (bytes == 0) return;
  check_step(step);
  s_.expect_from.push_back(src_rank);
  expect_steps_.push_back(static_cast<std::uint32_t>(step));
}

void ScheduleBuilder::copy(std::size_t step, Region src, Region dst, std::uint64_t bytes) {
  op(step, OpKind::kCopy, src, dst, bytes);
}

void ScheduleBuilder::reduce(std::size_t step, Region src, Region dst, std::uint64_t bytes) {
  op(step, OpKind::kReduce, src, dst, bytes);
}

void ScheduleBuilder::op(std::size_t step, OpKind kind, Region src, Region dst, std::uint64_t bytes) {
  if (bytes == 0) return;
  check_step(step);
  s_.ops.push_back(LocalOp{src.offset, dst.offset, bytes, kind, src.buf, dst.buf});
  op_steps_.push_back(static_cast<std::uint32_t>(step));
}

namespace {

// Stable counting sort of `items` by `steps`; returns where each step's items end.
template <class T>
std::vector<std::uint32_t> sort_by_step(std::vector<T>& items, const std::vector<std::uint32_t>& steps,
                                        std::size_t num_steps) {
  std::vector<std::uint32_t> ends(num_steps, 0);
  for (std::uint32_t s : steps) ++ends[s];
  std::uint32_t running = 0;
  for (auto& e : ends) {
    running += e;
    e = running;
  }
  // Walking backwards and filling each step's slots from its end keeps the insertion order.
  std::vector<std::uint32_t> next = ends;
  std::vector<T> sorted(items.size());
  for (std::size_t i = items.size(); i-- > 0;) sorted[--next[steps[i]]] = items[i];
  items = std::move(sorted);
  return ends;
}

}  // namespace

Schedule ScheduleBuilder::finish() && {
  const auto w = sort_by_step(s_.writes, write_steps_, num_steps_);
  const auto e = sort_by_step(s_.expect_from, expect_steps_, num_steps_);
  const auto o = sort_by_step(s_.ops, op_steps_, num_steps_);
  s_.step_ends.resize(num_steps_);
  for (std::size_t k = 0; k < num_steps_; ++k) s_.step_ends[k] = StepEnd{w[k], e[k], o[k]};
  return std::move(s_);
}

}  // namespace fabench::coll
