// The cold half of the timed-loop steps (harness/steps.hpp): what a loop
// reports once it has given up.
#include "fabench/harness/steps.hpp"

#include "fabench/verbs/error.hpp"

namespace fabench::harness {

ibv_wc first_failure(const verbs::CompletionQueue& cq, const ibv_wc& failed) noexcept {
  return first_failure_in(failed, [&](std::span<ibv_wc> wcs) { return cq.poll(wcs); });
}

std::string failure_text(const ibv_wc& wc, std::string_view qp_description) {
  std::string text = verbs::completion_error(wc, qp_description).what();
  if (wc.status == IBV_WC_WR_FLUSH_ERR) {
    // No failed request of its own came first: the QP was moved to the error
    // state by its responder half or by the device (an asynchronous event).
    text +=
        " (no failed request came before the flush on this side: the QP entered the error state "
        "as a responder; the peer's error names the cause)";
  }
  return text;
}

}  // namespace fabench::harness
