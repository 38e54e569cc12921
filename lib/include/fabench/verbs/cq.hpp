// CompletionQueue owns one ibv_cq and, in event mode, the ibv_comp_channel it
// reports to. poll() is the hot path: one inline call into the provider, no
// allocation, logging, virtual dispatch or exceptions. Event mode: arm(),
// then wait_event(timeout) blocks in poll(2) on the channel's fd (never
// without a timeout), reads and acknowledges the event; then poll() again.
#pragma once

#include <cstdint>
#include <span>

#include "fabench/verbs/handle.hpp"
#include <infiniband/verbs.h>

namespace fabench::verbs {

class Device;

template <>
void HandleTraits<ibv_comp_channel>::destroy(ibv_comp_channel* channel) noexcept;
template <>
void HandleTraits<ibv_cq>::destroy(ibv_cq* cq) noexcept;

class CompletionQueue {
 public:
  // min_cqe: entries at least (providers may round up; see capacity()).
  CompletionQueue(const Device& device, int min_cqe, bool with_channel = false, int comp_vector = 0);

  [[nodiscard]] ibv_cq* get() const noexcept { return cq_.get(); }
  [[nodiscard]] int capacity() const noexcept { return cq_.get()->cqe; }
  [[nodiscard]] bool has_channel() const noexcept { return channel_.get() != nullptr; }

  // Up to wcs.size() completions into wcs; returns how many (>= 0), or < 0
  // on a CQ error (ibv_poll_cq only promises a negative value).
  [[nodiscard]] int poll(std::span<ibv_wc> wcs) const noexcept {
    return ibv_poll_cq(cq_.get(), static_cast<int>(wcs.size()), wcs.data());
  }

  // Requests one event for the next completion (all completions, or only
  // solicited ones). Returns 0 or the error number. Event mode only.
  [[nodiscard]] int arm(bool solicited_only = false) const noexcept {
    return ibv_req_notify_cq(cq_.get(), solicited_only ? 1 : 0);
  }

  // Waits up to timeout_ms for the armed event: 1 event received (and
  // acknowledged; re-arm before waiting again), 0 timeout, < 0 -errno.
  // Completions that arrived before arm() raise no event, so the pattern is
  // arm -> poll -> (nothing) wait_event -> poll.
  [[nodiscard]] int wait_event(int timeout_ms) const noexcept;

 private:
  Handle<ibv_comp_channel> channel_;  // declared first: it outlives the CQ
  Handle<ibv_cq> cq_;
};

}  // namespace fabench::verbs
