// SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), for the shared-token
// check of the control plane (token.hpp), plus a constant-time comparison.
//
// Written here rather than taken from OpenSSL so that fabench needs no new
// build dependency for one hash function: SHA-256 has no secret-dependent
// branches or table lookups, so a plain implementation is constant-time by
// construction, and the FIPS 180-4 and RFC 4231 test vectors
// (test/unit/test_ctrl_token.cpp) pin it down.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace fabench::ctrl {

inline constexpr std::size_t kSha256Bytes = 32;
using Sha256Digest = std::array<std::uint8_t, kSha256Bytes>;

// Incremental SHA-256: update() any number of times, then finish() once.
class Sha256 {
 public:
  Sha256() noexcept;
  void update(std::span<const std::uint8_t> bytes) noexcept;
  [[nodiscard]] Sha256Digest finish() noexcept;

 private:
  void compress(const std::uint8_t* block) noexcept;

  std::array<std::uint32_t, 8> state_{};
  std::array<std::uint8_t, 64> block_{};
  std::size_t block_used_ = 0;
  std::uint64_t total_bytes_ = 0;
};

[[nodiscard]] Sha256Digest sha256(std::span<const std::uint8_t> bytes) noexcept;
[[nodiscard]] Sha256Digest hmac_sha256(std::span<const std::uint8_t> key,
                                       std::span<const std::uint8_t> message) noexcept;

// Equal contents, in time that depends only on the lengths (which are public).
[[nodiscard]] bool equal_constant_time(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b) noexcept;

}  // namespace fabench::ctrl
