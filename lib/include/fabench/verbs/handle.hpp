// Handle<T>: one verbs or rdma_cm object owned by this process, destroyed
// exactly once by HandleTraits<T>::destroy, which logs a failure (a
// destructor cannot throw); movable, not copyable. A borrowed handle (an
// object someone else owns, such as librdmacm's context or QP) is never
// destroyed. The classes of this layer hold their objects in Handles and
// declare no destructor or move operations of their own (the rule of zero):
// members go in reverse order of declaration, so a class declares the object
// that must outlive the others first.
#pragma once

#include <string_view>
#include <utility>

namespace fabench::verbs {

// How a T is destroyed: declared next to each class as an explicit specialisation,
// `template <> void HandleTraits<ibv_pd>::destroy(ibv_pd* pd) noexcept;`, defined in its .cpp.
template <typename T>
struct HandleTraits {
  static void destroy(T* object) noexcept;
};

template <typename T>
class Handle {
 public:
  Handle() noexcept = default;
  explicit Handle(T* object, bool owned = true) noexcept : p_(object), owned_(owned) {}
  ~Handle() { reset(); }
  Handle(Handle&& other) noexcept : p_(std::exchange(other.p_, nullptr)), owned_(other.owned_) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      reset();
      p_ = std::exchange(other.p_, nullptr);
      owned_ = other.owned_;
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  [[nodiscard]] T* get() const noexcept { return p_; }
  [[nodiscard]] bool owned() const noexcept { return owned_; }
  void reset() noexcept {
    if (p_ != nullptr && owned_) HandleTraits<T>::destroy(p_);
    p_ = nullptr;
  }

 private:
  T* p_ = nullptr;
  bool owned_ = true;
};

// The one line a failed destroy logs: "<call> failed: <error>" (rc: 0 or an
// errno value, negative or positive as providers return it).
void log_destroy_failure(std::string_view call, int rc, std::string_view what = {}) noexcept;

}  // namespace fabench::verbs
