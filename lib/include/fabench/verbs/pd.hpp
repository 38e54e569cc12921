// ProtectionDomain owns one ibv_pd (ibv_alloc_pd/ibv_dealloc_pd). Memory
// regions, queue pairs and address handles are created in it and must be
// destroyed before it (declare the ProtectionDomain first).
#pragma once

#include <string>

#include <infiniband/verbs.h>

namespace fabench::verbs {

class Device;

class ProtectionDomain {
 public:
  explicit ProtectionDomain(const Device& device);
  ~ProtectionDomain();
  ProtectionDomain(ProtectionDomain&& other) noexcept;
  ProtectionDomain& operator=(ProtectionDomain&& other) noexcept;
  ProtectionDomain(const ProtectionDomain&) = delete;
  ProtectionDomain& operator=(const ProtectionDomain&) = delete;

  [[nodiscard]] ibv_pd* get() const noexcept { return pd_; }
  [[nodiscard]] ibv_context* context() const noexcept { return pd_ != nullptr ? pd_->context : nullptr; }
  [[nodiscard]] std::string device_name() const;

 private:
  void reset() noexcept;
  ibv_pd* pd_ = nullptr;
};

}  // namespace fabench::verbs
