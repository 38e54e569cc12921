// ProtectionDomain: ibv_alloc_pd / ibv_dealloc_pd.
#include "fabench/verbs/pd.hpp"

#include <utility>

#include "fabench/verbs/device.hpp"
#include "fabench/verbs/error.hpp"

namespace fabench::verbs {

ProtectionDomain::ProtectionDomain(const Device& device)
    : pd_(check_ptr(ibv_alloc_pd(device.get()), "ibv_alloc_pd", device.name())) {}

std::string ProtectionDomain::device_name() const {
  return pd_.get() != nullptr ? ibv_get_device_name(pd_.get()->context->device) : "";
}

template <>
void HandleTraits<ibv_pd>::destroy(ibv_pd* pd) noexcept {
  // EBUSY: an MR, QP or AH of this PD is still alive.
  if (const int rc = ibv_dealloc_pd(pd); rc != 0) log_destroy_failure("ibv_dealloc_pd", rc);
}

}  // namespace fabench::verbs
