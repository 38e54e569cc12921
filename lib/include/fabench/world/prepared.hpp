// The prepared benchmark of a session's rank (world::Job): built by prepare()
// when another benchmark (or none) is ready, kept while the same one runs
// again, and dropped after a failed run, which may have stopped half-way (the
// next run of it starts afresh). fabench-kv's Transfer, fabench-ep's Engine.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <utility>

namespace fabench::world {

template <class T>
class Prepared {
 public:
  // `make()` (a unique_ptr<T>) unless benchmark `bench` is the one ready.
  template <class Make>
  T& prepare(std::size_t bench, Make&& make) {
    if (current_ != bench || !ready_) {
      drop();
      ready_ = std::forward<Make>(make)();
      current_ = bench;
    }
    return *ready_;
  }
  void drop() noexcept {
    ready_.reset();
    current_.reset();
  }
  [[nodiscard]] T& operator*() const { return *ready_; }
  [[nodiscard]] T* operator->() const { return ready_.get(); }

 private:
  std::optional<std::size_t> current_;
  std::unique_ptr<T> ready_;
};

}  // namespace fabench::world
