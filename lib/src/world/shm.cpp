#include "fabench/world/shm.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>
#include <stdexcept>

#include <fmt/format.h>

#include "fabench/base/error.hpp"

namespace fabench::world {

namespace {

static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "counters are shared between processes");

std::uint64_t align_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }

std::string segment_name(std::uint64_t id, std::uint32_t rank) { return fmt::format("/fabench-{:016x}-{}", id, rank); }

// Closes the descriptor on every path; the mapping outlives it.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14
#endif

// Every page allocated and mapped writable here, at set-up, as an RDMA arena's are when it is
// registered: MAP_POPULATE maps a shared segment's pages read-only, so without more each first
// write (our copies into a peer's arena) would fault; MADV_POPULATE_WRITE write-faults every
// page without changing its content. Where the kernel lacks it, MAP_POPULATE is what there is.
std::byte* map_segment(int fd, std::uint64_t bytes, const std::string& name) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  if (p == MAP_FAILED) throw RunError(fmt::format("mmap of {} ({} bytes): {}", name, bytes, std::strerror(errno)));
  if (::madvise(p, bytes, MADV_POPULATE_WRITE) != 0 && errno != EINVAL) {
    const int e = errno;
    ::munmap(p, bytes);
    throw RunError(fmt::format("populating {} ({} bytes): {}", name, bytes, std::strerror(e)));
  }
  return static_cast<std::byte*>(p);
}

// The segments' id: rank 0 draws it, every rank learns it from the gather.
std::uint64_t segment_id(ctrl::Bootstrap& boot) {
  std::uint64_t id = 0;
  if (boot.rank() == 0) id = (std::random_device{}() * 0x100000001ULL) ^ static_cast<std::uint64_t>(::getpid());
  std::vector<std::uint8_t> mine(8);
  std::memcpy(mine.data(), &id, 8);
  const auto all = boot.allgather(mine);
  std::memcpy(&id, all.at(0).data(), 8);
  return id;
}

// This rank's own segment `name`, created (it must not exist), sized and mapped;
// on failure the name is unlinked again.
std::byte* create_segment(const std::string& name, std::uint64_t bytes) {
  Fd fd{::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600)};
  if (fd.fd < 0) throw RunError(fmt::format("shm_open {}: {}", name, std::strerror(errno)));
  if (::ftruncate(fd.fd, static_cast<off_t>(bytes)) != 0) {
    const int e = errno;
    ::shm_unlink(name.c_str());
    throw RunError(
        fmt::format("ftruncate of {} to {} bytes: {} (is /dev/shm large enough?)", name, bytes, std::strerror(e)));
  }
  try {
    return map_segment(fd.fd, bytes, name);
  } catch (...) {
    ::shm_unlink(name.c_str());
    throw;
  }
}

}  // namespace

ShmWorld::ShmWorld(ctrl::Bootstrap& boot, std::span<const std::uint32_t> peers, std::uint64_t arena_bytes,
                   std::uint64_t counters)
    : rank_(boot.rank()),
      size_(boot.size()),
      arena_bytes_(std::max<std::uint64_t>(arena_bytes, 64)),
      counters_(std::max<std::uint64_t>(counters, 1)),
      counter_offset_(align_up(arena_bytes_, 4096)),
      map_bytes_(counter_offset_ + align_up(counters_ * kCounterStride, 4096)),
      maps_(boot.size(), nullptr) {
  for (const auto p : peers) {
    if (p >= size_) throw RunError(fmt::format("peer rank {} outside a world of {}", p, size_));
    if (p != rank_) peers_.push_back(p);
  }
  std::sort(peers_.begin(), peers_.end());
  peers_.erase(std::unique(peers_.begin(), peers_.end()), peers_.end());
  const std::uint64_t id = segment_id(boot);
  const std::string own = segment_name(id, rank_);
  maps_[rank_] = create_segment(own, map_bytes_);
  std::string problem;
  try {
    boot.barrier();  // every segment exists
    for (const auto p : peers_) {
      const std::string name = segment_name(id, p);
      Fd fd{::shm_open(name.c_str(), O_RDWR, 0)};
      if (fd.fd < 0) {
        problem = fmt::format("cannot open {}'s shared memory {}: {} (--transport shm needs every rank on one host)",
                              boot.describe_rank(p), name, std::strerror(errno));
        break;
      }
      maps_[p] = map_segment(fd.fd, map_bytes_, name);
    }
  } catch (const std::exception& e) {
    problem = e.what();
  }
  // Every rank has mapped what it needs (or failed): the names can go.
  try {
    boot.barrier();
  } catch (...) {
    ::shm_unlink(own.c_str());
    throw;
  }
  ::shm_unlink(own.c_str());
  if (!problem.empty()) {
    for (auto*& m : maps_) {
      if (m != nullptr) ::munmap(m, map_bytes_);
      m = nullptr;
    }
    throw RunError(problem);
  }
}

ShmWorld::~ShmWorld() {
  for (auto* m : maps_) {
    if (m != nullptr) ::munmap(m, map_bytes_);
  }
}

void ShmWorld::reset_counters() noexcept {
  for (std::uint64_t i = 0; i < counters_; ++i) counter(rank_, i).store(0, std::memory_order_relaxed);
}

}  // namespace fabench::world
