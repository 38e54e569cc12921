// ReducePool: the executor's local reductions and copies split over --reduce-threads threads,
// for links faster than one core reduces (docs/design/reductions.md has the rates per core).
// The calling thread takes the first piece; the others wait on a futex between jobs (no core is
// taken while nothing runs) and spin only while one is running. Pieces are whole cache lines.
// A job below kMinSplitBytes runs on the caller alone.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include "fabench/coll/reduce.hpp"
#include "fabench/coll/schedule.hpp"

namespace fabench::collbench {

class ReducePool {
 public:
  static constexpr std::uint64_t kMinSplitBytes = 256 * 1024;

  explicit ReducePool(std::uint32_t threads);
  ReducePool(const ReducePool&) = delete;
  ReducePool& operator=(const ReducePool&) = delete;
  ~ReducePool();

  [[nodiscard]] std::uint32_t threads() const noexcept { return static_cast<std::uint32_t>(workers_.size()) + 1; }
  // dst = dst op src (kReduce, elements of t) or memcpy (kCopy) over `bytes`; returns when done.
  void run(coll::OpKind kind, coll::DType t, coll::ReduceOp op, std::byte* dst, const std::byte* src,
           std::uint64_t bytes) noexcept;

 private:
  struct Job {
    coll::OpKind kind = coll::OpKind::kCopy;
    coll::DType dtype = coll::DType::kF32;
    coll::ReduceOp op = coll::ReduceOp::kSum;
    std::byte* dst = nullptr;
    const std::byte* src = nullptr;
    std::uint64_t bytes = 0;
    std::uint64_t piece = 0;  // bytes per thread, a multiple of 64
  };
  void piece(std::uint32_t index) const noexcept;
  void worker(std::uint32_t index) noexcept;

  Job job_;
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<std::uint32_t> pending_{0};
  std::atomic<bool> stop_{false};
  std::vector<std::thread> workers_;
};

}  // namespace fabench::collbench
