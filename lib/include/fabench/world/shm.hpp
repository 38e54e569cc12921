// ShmWorld: N ranks on one host, each with one arena in POSIX shared memory that every peer of
// it maps: the shared-memory counterpart of World, for `--transport shm`. A rank "writes" to a
// peer by copying into its mapping of the peer's arena, then bumps one of the peer's arrival
// counters (a release store after the copy; the peer reads it with acquire), as a write with
// immediate lands data and then its completion. The layout of a segment:
//   [ arena (arena_bytes, the same on every rank) | counters, one per 64-byte line ]
// Segments are named /fabench-<id>-<rank>, id drawn by rank 0; each rank unlinks its own name
// once every peer has mapped it, so nothing is left in /dev/shm after the world is up, whatever
// happens later. A peer on another host (no such name here) is named in the error.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "fabench/ctrl/bootstrap.hpp"

namespace fabench::world {

class ShmWorld {
 public:
  static constexpr std::uint64_t kCounterStride = 64;

  // Collective over all ranks of `boot`. `peers` as World's (symmetric); `counters` per rank.
  ShmWorld(ctrl::Bootstrap& boot, std::span<const std::uint32_t> peers, std::uint64_t arena_bytes,
           std::uint64_t counters);
  ShmWorld(const ShmWorld&) = delete;
  ShmWorld& operator=(const ShmWorld&) = delete;
  ShmWorld(ShmWorld&&) = delete;
  ShmWorld& operator=(ShmWorld&&) = delete;
  ~ShmWorld();

  [[nodiscard]] std::uint32_t rank() const noexcept { return rank_; }
  [[nodiscard]] std::uint32_t size() const noexcept { return size_; }
  [[nodiscard]] std::span<const std::uint32_t> peers() const noexcept { return peers_; }
  [[nodiscard]] bool has_peer(std::uint32_t peer) const noexcept { return peer < size_ && maps_[peer] != nullptr && peer != rank_; }
  [[nodiscard]] std::uint64_t arena_bytes() const noexcept { return arena_bytes_; }
  [[nodiscard]] std::uint64_t counters() const noexcept { return counters_; }
  // This rank's arena, and a peer's as mapped here.
  [[nodiscard]] std::byte* arena() const noexcept { return maps_[rank_]; }
  [[nodiscard]] std::byte* arena_of(std::uint32_t peer) const noexcept { return maps_[peer]; }
  // Counter i of this rank (read by it) and of a peer (bumped by us).
  [[nodiscard]] std::atomic<std::uint64_t>& counter(std::uint32_t rank, std::uint64_t i) const noexcept {
    return *reinterpret_cast<std::atomic<std::uint64_t>*>(maps_[rank] + counter_offset_ + i * kCounterStride);
  }
  // Sets this rank's counters to zero: only while no peer can be writing (between runs).
  void reset_counters() noexcept;

 private:
  std::uint32_t rank_;
  std::uint32_t size_;
  std::vector<std::uint32_t> peers_;
  std::uint64_t arena_bytes_;
  std::uint64_t counters_;
  std::uint64_t counter_offset_;
  std::uint64_t map_bytes_;
  std::vector<std::byte*> maps_;  // by rank: own and peers' segments, nullptr for the others
};

}  // namespace fabench::world
