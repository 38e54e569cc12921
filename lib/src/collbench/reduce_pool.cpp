#include "fabench/collbench/reduce_pool.hpp"

#include <algorithm>
#include <cstring>

namespace fabench::collbench {

namespace {

void apply(coll::OpKind kind, coll::DType t, coll::ReduceOp op, std::byte* dst, const std::byte* src,
           std::uint64_t bytes) noexcept {
  if (kind == coll::OpKind::kReduce) {
    coll::reduce(t, op, dst, src, bytes / coll::dtype_size(t));
  } else {
    std::memcpy(dst, src, bytes);
  }
}

}  // namespace

ReducePool::ReducePool(std::uint32_t threads) {
  for (std::uint32_t i = 1; i < std::max<std::uint32_t>(threads, 1); ++i) {
    workers_.emplace_back([this, i] { worker(i); });
  }
}

ReducePool::~ReducePool() {
  stop_.store(true, std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  generation_.notify_all();
  for (auto& w : workers_) w.join();
}

void ReducePool::piece(std::uint32_t index) const noexcept {
  const std::uint64_t begin = std::min(job_.bytes, index * job_.piece);
  const std::uint64_t end = std::min(job_.bytes, begin + job_.piece);
  if (end > begin) apply(job_.kind, job_.dtype, job_.op, job_.dst + begin, job_.src + begin, end - begin);
}

void ReducePool::run(coll::OpKind kind, coll::DType t, coll::ReduceOp op, std::byte* dst, const std::byte* src,
                     std::uint64_t bytes) noexcept {
  if (workers_.empty() || bytes < kMinSplitBytes) {
    apply(kind, t, op, dst, src, bytes);
    return;
  }
  const std::uint64_t n = threads();
  job_ = Job{kind, t, op, dst, src, bytes, (bytes + n * 64 - 1) / (n * 64) * 64};
  pending_.store(static_cast<std::uint32_t>(workers_.size()), std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  piece(0);
  while (pending_.load(std::memory_order_acquire) != 0) std::this_thread::yield();
}

void ReducePool::worker(std::uint32_t index) noexcept {
  std::uint64_t seen = 0;
  for (;;) {
    generation_.wait(seen, std::memory_order_acquire);
    seen = generation_.load(std::memory_order_acquire);
    if (stop_.load(std::memory_order_acquire)) return;
    piece(index);
    pending_.fetch_sub(1, std::memory_order_release);
  }
}

}  // namespace fabench::collbench
