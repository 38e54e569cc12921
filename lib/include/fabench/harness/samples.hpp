// Samples: the per-operation measurements of one benchmark run, kept in a
// buffer allocated before the timed loop. record() never allocates, logs or
// throws, and never drops a sample: a full buffer rejects the sample and
// counts it, and stats() then refuses to summarize an incomplete set rather
// than quietly report a tail without its largest values.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "fabench/harness/stats.hpp"

namespace fabench::harness {

class Samples {
 public:
  Samples() = default;
  // Allocates room for `capacity` samples, once.
  explicit Samples(std::size_t capacity) { reserve(capacity); }

  // Setup: (re)allocate for `capacity` samples and clear. Not for the timed loop.
  // Every sample's page is touched here, so the loop takes no page fault.
  void reserve(std::size_t capacity) {
    values_.assign(capacity, 0.0);
    size_ = 0;
    rejected_ = 0;
  }
  // The same, kReserveStep samples at a time, calling `between` after each
  // step: for a caller whose peer must keep hearing from it (a Keepalive,
  // ctrl::Pulse) while a large buffer is touched (10^8 samples, 800 MB,
  // take seconds).
  static constexpr std::size_t kReserveStep = std::size_t{1} << 20;
  void reserve(std::size_t capacity, const std::function<void()>& between) {
    values_.clear();
    values_.reserve(capacity);
    while (values_.size() < capacity) {
      values_.resize(std::min(capacity, values_.size() + kReserveStep), 0.0);
      if (between) between();
    }
    size_ = 0;
    rejected_ = 0;
  }
  // Forget recorded samples, keep the buffer (no allocation).
  void clear() noexcept {
    size_ = 0;
    rejected_ = 0;
  }

  // Hot path. Returns false (and counts the sample as rejected) when full;
  // size the buffer to the iteration count so that never happens.
  [[nodiscard]] bool record(double value) noexcept {
    if (size_ == values_.size()) [[unlikely]] {
      ++rejected_;
      return false;
    }
    values_[size_++] = value;
    return true;
  }

  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::size_t capacity() const noexcept { return values_.size(); }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] bool full() const noexcept { return size_ == values_.size(); }
  // Samples that arrived when the buffer was full (0 in a correct run).
  [[nodiscard]] std::uint64_t rejected() const noexcept { return rejected_; }
  // After the loop: every recorded sample times `factor` (a loop that timed
  // itself in clock ticks converts them to nanoseconds; SampleClock).
  void scale(double factor) noexcept {
    if (factor == 1.0) return;
    for (std::size_t i = 0; i < size_; ++i) values_[i] *= factor;
  }
  // The recorded samples, in recording order.
  [[nodiscard]] std::span<const double> values() const noexcept { return {values_.data(), size_}; }

  // Statistics over every recorded sample (copies and sorts; after the loop).
  // Throws std::logic_error when samples were rejected: statistics without
  // them would be wrong.
  [[nodiscard]] Stats stats() const;

 private:
  std::vector<double> values_;
  std::size_t size_ = 0;
  std::uint64_t rejected_ = 0;
};

}  // namespace fabench::harness
