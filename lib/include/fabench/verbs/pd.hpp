// ProtectionDomain owns one ibv_pd (ibv_alloc_pd/ibv_dealloc_pd). Memory
// regions, queue pairs and address handles are created in it and must be
// destroyed before it (declare the ProtectionDomain first).
#pragma once

#include <string>

#include <infiniband/verbs.h>

#include "fabench/verbs/handle.hpp"

namespace fabench::verbs {

class Device;

template <>
void HandleTraits<ibv_pd>::destroy(ibv_pd* pd) noexcept;

class ProtectionDomain {
 public:
  explicit ProtectionDomain(const Device& device);

  [[nodiscard]] ibv_pd* get() const noexcept { return pd_.get(); }
  [[nodiscard]] ibv_context* context() const noexcept { return pd_.get() != nullptr ? pd_.get()->context : nullptr; }
  [[nodiscard]] std::string device_name() const;

 private:
  Handle<ibv_pd> pd_;
};

}  // namespace fabench::verbs
