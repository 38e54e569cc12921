// Internal to lib/src/kvbench: the 64-bit wr_ids and 32-bit immediates of a
// Transfer (transfer.hpp), shared by its setup (transfer_setup.cpp) and its
// loop (transfer.cpp). Not installed.
#pragma once

#include <cstdint>

namespace fabench::kvbench::transfer_ids {

// Immediate: the notification's kind in the top two bits, the iteration below.
inline constexpr std::uint32_t kKindShift = 30;
inline constexpr std::uint32_t kHeartbeat = 0;  // poster -> waiter: still posting
inline constexpr std::uint32_t kReady = 1;      // decode -> prefill (push): my pool is poisoned, write
inline constexpr std::uint32_t kDone = 2;       // prefill -> decode (push): every write of the iteration is before this
inline constexpr std::uint32_t kFree = 3;       // decode -> prefill (pull): I have read and checked your pages
// Send wr_ids: a notification's, else (queue << 32) | the WR's position in its queue, or
// kDonePos for a queue's "done".
inline constexpr std::uint64_t kControlId = ~std::uint64_t{0};
inline constexpr std::uint32_t kDonePos = 0xffffffffU;

}  // namespace fabench::kvbench::transfer_ids
