// CompletionQueue: ibv_create_cq / ibv_destroy_cq and the completion channel.
#include "fabench/verbs/cq.hpp"

#include <fcntl.h>
#include <poll.h>

#include <cerrno>
#include <utility>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "fabench/verbs/device.hpp"
#include "fabench/verbs/error.hpp"

namespace fabench::verbs {

CompletionQueue::CompletionQueue(const Device& device, int min_cqe, bool with_channel, int comp_vector) {
  const int max_cqe = device.raw_attr().max_cqe;
  if (min_cqe < 1 || min_cqe > max_cqe) {
    throw VerbsError("ibv_create_cq", EINVAL,
                     fmt::format("{} CQ entries requested; {} allows 1..{}", min_cqe, device.name(), max_cqe));
  }
  if (with_channel) {
    channel_ = Handle<ibv_comp_channel>(
        check_ptr(ibv_create_comp_channel(device.get()), "ibv_create_comp_channel", device.name()));
    // Non-blocking, so that ibv_get_cq_event after poll(2) never blocks.
    const int flags = fcntl(channel_.get()->fd, F_GETFL);
    if (flags < 0 || fcntl(channel_.get()->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
      const int err = errno;
      throw VerbsError("fcntl(O_NONBLOCK)", err, "completion channel fd");
    }
  }
  cq_ = Handle<ibv_cq>(ibv_create_cq(device.get(), min_cqe, nullptr, channel_.get(), comp_vector));
  if (cq_.get() == nullptr) {
    const int err = errno != 0 ? errno : EIO;
    throw VerbsError("ibv_create_cq", err,
                     fmt::format("{} entries, comp_vector {} on {}", min_cqe, comp_vector, device.name()));
  }
}

int CompletionQueue::wait_event(int timeout_ms) const noexcept {
  if (channel_.get() == nullptr) return -EINVAL;
  pollfd pfd{channel_.get()->fd, POLLIN, 0};
  int n = 0;
  do {
    n = ::poll(&pfd, 1, timeout_ms);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return -errno;
  if (n == 0) return 0;
  ibv_cq* ev_cq = nullptr;
  void* ev_ctx = nullptr;
  // ibv_get_cq_event is the exception among int verbs: -1 and errno.
  if (ibv_get_cq_event(channel_.get(), &ev_cq, &ev_ctx) != 0) {
    return errno == EAGAIN ? 0 : -errno;
  }
  // Every event must be acknowledged before ibv_destroy_cq, or it hangs.
  ibv_ack_cq_events(ev_cq, 1);
  return 1;
}

template <>
void HandleTraits<ibv_cq>::destroy(ibv_cq* cq) noexcept {
  // EBUSY: a queue pair still uses this CQ.
  if (const int rc = ibv_destroy_cq(cq); rc != 0) log_destroy_failure("ibv_destroy_cq", rc);
}

template <>
void HandleTraits<ibv_comp_channel>::destroy(ibv_comp_channel* channel) noexcept {
  if (const int rc = ibv_destroy_comp_channel(channel); rc != 0) log_destroy_failure("ibv_destroy_comp_channel", rc);
}

}  // namespace fabench::verbs
