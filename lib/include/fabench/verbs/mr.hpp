// HostBuffer owns a page-aligned, zero-filled host allocation (mmap), on
// huge pages when asked; MemoryRegion owns one registration (ibv_reg_mr /
// ibv_dereg_mr) of such memory with exactly the access flags the caller asks
// for: there is no "all access" default, because remote access a benchmark
// does not need is a hole, and a missing flag should fail loudly in a test.
// A MemoryRegion must be destroyed before its buffer and its ProtectionDomain.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include <infiniband/verbs.h>

#include "fabench/verbs/endpoint.hpp"
#include "fabench/verbs/handle.hpp"

namespace fabench::verbs {

class ProtectionDomain;

template <>
void HandleTraits<ibv_mr>::destroy(ibv_mr* mr) noexcept;

enum class HugePages {
  kNo,       // normal pages
  kTry,      // MAP_HUGETLB, falling back to normal pages with a warning
  kRequire,  // MAP_HUGETLB or throw
};

class HostBuffer {
 public:
  HostBuffer() = default;
  // bytes > 0; rounded up to the page (or huge page) size internally.
  explicit HostBuffer(std::size_t bytes, HugePages huge = HugePages::kNo);
  ~HostBuffer();
  HostBuffer(HostBuffer&& other) noexcept;
  HostBuffer& operator=(HostBuffer&& other) noexcept;
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;

  [[nodiscard]] std::byte* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::span<std::byte> span() const noexcept { return {data_, size_}; }
  [[nodiscard]] bool huge_pages() const noexcept { return huge_; }

 private:
  void reset() noexcept;
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;    // as requested
  std::size_t mapped_ = 0;  // as mapped
  bool huge_ = false;
};

class MemoryRegion {
 public:
  // access: IBV_ACCESS_* flags, exactly as needed (LOCAL_WRITE for receive
  // buffers and read/atomic results, REMOTE_* for what peers may do).
  MemoryRegion(const ProtectionDomain& pd, void* addr, std::size_t bytes, int access);
  MemoryRegion(const ProtectionDomain& pd, const HostBuffer& buffer, int access);

  [[nodiscard]] ibv_mr* get() const noexcept { return mr_.get(); }
  [[nodiscard]] std::uint32_t lkey() const noexcept { return mr_.get()->lkey; }
  [[nodiscard]] std::uint32_t rkey() const noexcept { return mr_.get()->rkey; }
  [[nodiscard]] std::byte* data() const noexcept { return static_cast<std::byte*>(mr_.get()->addr); }
  [[nodiscard]] std::uint64_t addr() const noexcept { return reinterpret_cast<std::uintptr_t>(mr_.get()->addr); }
  [[nodiscard]] std::size_t length() const noexcept { return mr_.get()->length; }
  [[nodiscard]] int access() const noexcept { return access_; }

  // A scatter/gather entry for [offset, offset + bytes) of this region.
  [[nodiscard]] ibv_sge sge(std::size_t offset, std::uint32_t bytes) const noexcept {
    return ibv_sge{addr() + offset, bytes, lkey()};
  }
  // Writes addr/rkey/length into an Endpoint for the peer.
  void describe(Endpoint& endpoint) const noexcept;

 private:
  Handle<ibv_mr> mr_;
  int access_ = 0;
};

}  // namespace fabench::verbs
