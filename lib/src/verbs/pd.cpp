// ProtectionDomain: ibv_alloc_pd / ibv_dealloc_pd.
#include "fabench/verbs/pd.hpp"

#include <utility>

#include <spdlog/spdlog.h>

#include "fabench/verbs/device.hpp"
#include "fabench/verbs/error.hpp"

namespace fabench::verbs {

ProtectionDomain::ProtectionDomain(const Device& device)
    : pd_(check_ptr(ibv_alloc_pd(device.get()), "ibv_alloc_pd", device.name())) {}

ProtectionDomain::~ProtectionDomain() { reset(); }

ProtectionDomain::ProtectionDomain(ProtectionDomain&& other) noexcept : pd_(std::exchange(other.pd_, nullptr)) {}

ProtectionDomain& ProtectionDomain::operator=(ProtectionDomain&& other) noexcept {
  if (this != &other) {
    reset();
    pd_ = std::exchange(other.pd_, nullptr);
  }
  return *this;
}

std::string ProtectionDomain::device_name() const {
  return pd_ != nullptr ? ibv_get_device_name(pd_->context->device) : "";
}

void ProtectionDomain::reset() noexcept {
  if (pd_ == nullptr) return;
  if (const int rc = ibv_dealloc_pd(pd_); rc != 0) {
    // EBUSY: an MR, QP or AH of this PD is still alive.
    spdlog::error("ibv_dealloc_pd failed: {}", error_text(rc < 0 ? -rc : rc));
  }
  pd_ = nullptr;
}

}  // namespace fabench::verbs
