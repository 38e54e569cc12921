// The control plane's little-endian field codec: Writer appends fields,
// Reader reads them bounds-checked and names the field an error is in.
// Internal to lib/ctrl (wire.cpp, frame.cpp).
#pragma once

#include <fmt/format.h>

#include <bit>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "fabench/ctrl/error.hpp"

namespace fabench::ctrl::detail {

[[noreturn]] inline void malformed(const std::string& what) {
  throw CtrlError(CtrlError::Kind::kMalformed, "malformed control message: " + what);
}

// Little-endian writer: one byte at a time, so host byte order and struct
// layout never reach the wire.
class Writer {
 public:
  explicit Writer(std::vector<std::uint8_t>& out) : out_(out) {}

  template <typename T>
  void uint(T v) {
    static_assert(std::is_unsigned_v<T>);
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      out_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
    }
  }
  void i32(std::int32_t v) { uint(static_cast<std::uint32_t>(v)); }
  void f64(double v) { uint(std::bit_cast<std::uint64_t>(v)); }
  void length(std::size_t n, std::string_view what) {
    if (n > std::numeric_limits<std::uint32_t>::max()) {
      throw CtrlError(CtrlError::Kind::kMalformed,
                      fmt::format("cannot encode {}: {} exceeds the u32 length field", what, n));
    }
    uint(static_cast<std::uint32_t>(n));
  }
  void str(std::string_view s, std::string_view what) {
    length(s.size(), what);
    out_.insert(out_.end(), s.begin(), s.end());
  }
  void bytes(std::span<const std::uint8_t> b, std::string_view what) {
    length(b.size(), what);
    out_.insert(out_.end(), b.begin(), b.end());
  }

 private:
  std::vector<std::uint8_t>& out_;
};

// Bounds-checked little-endian reader over one payload. Every read names the
// field it was reading, so an error says where the payload went wrong.
class Reader {
 public:
  Reader(std::span<const std::uint8_t> in, std::string_view msg) : in_(in), msg_(msg) {}

  template <typename T>
  T uint(std::string_view field) {
    static_assert(std::is_unsigned_v<T>);
    need(sizeof(T), field);
    T v = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      v |= static_cast<T>(static_cast<T>(in_[pos_ + i]) << (8 * i));
    }
    pos_ += sizeof(T);
    return v;
  }
  std::int32_t i32(std::string_view field) { return static_cast<std::int32_t>(uint<std::uint32_t>(field)); }
  double f64(std::string_view field) { return std::bit_cast<double>(uint<std::uint64_t>(field)); }

  std::string str(std::string_view field) {
    const auto n = uint<std::uint32_t>(field);
    need(n, field);
    std::string s(reinterpret_cast<const char*>(in_.data() + pos_), n);
    pos_ += n;
    return s;
  }
  std::vector<std::uint8_t> bytes(std::string_view field) {
    const auto n = uint<std::uint32_t>(field);
    need(n, field);
    std::vector<std::uint8_t> b(in_.begin() + static_cast<std::ptrdiff_t>(pos_),
                                in_.begin() + static_cast<std::ptrdiff_t>(pos_ + n));
    pos_ += n;
    return b;
  }
  // A list count, checked against the bytes left before anything is reserved:
  // each element takes at least `min_element_bytes`.
  std::size_t count(std::string_view field, std::size_t min_element_bytes) {
    const auto n = uint<std::uint32_t>(field);
    if (min_element_bytes > 0 && n > remaining() / min_element_bytes) {
      malformed(fmt::format("{}: {} claims {} elements of at least {} bytes but only {} bytes remain", msg_, field, n,
                            min_element_bytes, remaining()));
    }
    return n;
  }
  [[nodiscard]] std::size_t remaining() const noexcept { return in_.size() - pos_; }

  void finish() const {
    if (remaining() != 0) {
      malformed(fmt::format("{}: {} trailing bytes after the last field", msg_, remaining()));
    }
  }

  [[nodiscard]] std::string_view msg() const noexcept { return msg_; }

 private:
  void need(std::size_t n, std::string_view field) const {
    if (n > remaining()) {
      malformed(fmt::format("{}: truncated at {} (needs {} bytes, {} remain)", msg_, field, n, remaining()));
    }
  }

  std::span<const std::uint8_t> in_;
  std::size_t pos_ = 0;
  std::string_view msg_;
};

}  // namespace fabench::ctrl::detail
