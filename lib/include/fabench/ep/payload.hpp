// What dispatch and combine carry, so that every byte is checked at its receiver:
//
// A dispatched token copy starts with a header (source rank, token index, tag = the receiving
// rank in normal mode or the expert in low-latency mode, top_k and the token's expert ids in
// the order chosen), then a pattern that depends on (source, token) alone. The receiver reads
// the header, regenerates the whole copy and compares it byte for byte.
//
// Combine: expert e's output for token t of rank s is the bf16 vector y(s, t, e) of integers in
// [-v, v], v = min(3, 255 / (8 x top_k)) >= 1; the j-th expert's weight is 2^-(j mod 4). Every
// partial sum of w_j x y_j is then a multiple of 1/8 below 2^8 / 8 in magnitude, exact in bf16
// whatever the order of the additions: the combined output must equal expected_output() bit
// for bit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace fabench::ep {

struct TokenId {
  std::uint32_t source = 0;
  std::uint32_t token = 0;
  std::uint32_t tag = 0;
};

[[nodiscard]] constexpr std::size_t token_header_bytes(std::uint32_t top_k) { return 14 + 2 * std::size_t{top_k}; }

// Fills `out` (a whole token copy) for `id` with the expert ids `ids`.
void write_token(std::span<std::byte> out, const TokenId& id, std::span<const std::uint16_t> ids);
// Rewrites only the tag of a copy made by write_token (copies to several ranks differ there).
void set_token_tag(std::span<std::byte> copy, std::uint32_t tag);

struct ReadToken {
  TokenId id;
  std::uint32_t top_k = 0;
  std::uint16_t ids[16] = {};
};
// Reads the header and checks the copy byte for byte against what write_token makes of it.
// False when any byte differs or the header is not one (top_k over 16 or over the room).
[[nodiscard]] bool read_token(std::span<const std::byte> copy, ReadToken& out);

[[nodiscard]] inline float expert_weight(std::uint32_t j) { return 1.0f / static_cast<float>(1u << (j % 4)); }

// y(s, t, e) as bf16, `out.size()` = hidden elements.
void expert_output(std::span<std::uint16_t> out, const TokenId& token, std::uint32_t expert, std::uint32_t top_k);

// Adds w x y(s, t, e) for the experts ids[j] with keep(ids[j]) to acc (float, exact).
template <class Keep>
void add_weighted_outputs(std::span<float> acc, const TokenId& token, std::span<const std::uint16_t> ids, Keep keep);

// acc -> bf16 (exact: the values are multiples of 1/8 below 32).
void to_bf16(std::span<const float> acc, std::span<std::uint16_t> out);
// The bf16 value of element i of y(s, t, e): also what add_weighted_outputs adds.
[[nodiscard]] float expert_value(const TokenId& token, std::uint32_t expert, std::uint32_t i, std::uint32_t top_k);

// acc[i] += w x y(s, t, e)[i].
void add_expert_output(std::span<float> acc, const TokenId& token, std::uint32_t expert, float w, std::uint32_t top_k);

// Σ_j w_j y(s, t, ids[j]) as bf16: what combine must give for the token.
void expected_output(std::span<std::uint16_t> out, const TokenId& token, std::span<const std::uint16_t> ids);

template <class Keep>
void add_weighted_outputs(std::span<float> acc, const TokenId& token, std::span<const std::uint16_t> ids, Keep keep) {
  const auto k = static_cast<std::uint32_t>(ids.size());
  for (std::uint32_t j = 0; j < k; ++j) {
    if (!keep(ids[j])) continue;
    add_expert_output(acc, token, ids[j], expert_weight(j), k);
  }
}

}  // namespace fabench::ep
