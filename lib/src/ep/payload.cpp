#include "fabench/ep/payload.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "fabench/coll/reduce.hpp"
#include "mix.hpp"

namespace fabench::ep {

namespace {

std::uint64_t token_seed(std::uint32_t source, std::uint32_t token) {
  std::uint64_t s = (std::uint64_t{source} << 32) | token;
  return detail::mix(s);
}

// One 64-bit word of the pattern: cheap, and different in every word of every token.
std::uint64_t pattern_word(std::uint64_t seed, std::uint64_t w) {
  std::uint64_t h = seed ^ (w * 0x9e3779b97f4a7c15ull);
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ull;
  return h ^ (h >> 32);
}

void fill_pattern(std::span<std::byte> out, std::uint64_t seed) {
  std::size_t i = 0;
  for (std::uint64_t w = 0; i + 8 <= out.size(); ++w, i += 8) {
    const std::uint64_t v = pattern_word(seed, w);
    std::memcpy(out.data() + i, &v, 8);
  }
  if (i < out.size()) {
    const std::uint64_t v = pattern_word(seed, i / 8);
    std::memcpy(out.data() + i, &v, out.size() - i);
  }
}

void put32(std::span<std::byte> out, std::size_t at, std::uint32_t v) { std::memcpy(out.data() + at, &v, 4); }
std::uint32_t get32(std::span<const std::byte> in, std::size_t at) {
  std::uint32_t v = 0;
  std::memcpy(&v, in.data() + at, 4);
  return v;
}

std::uint32_t value_bound(std::uint32_t top_k) { return std::max(1u, std::min(3u, 255u / (8u * std::max(top_k, 1u)))); }

}  // namespace

void write_token(std::span<std::byte> out, const TokenId& id, std::span<const std::uint16_t> ids) {
  fill_pattern(out, token_seed(id.source, id.token));
  put32(out, 0, id.source);
  put32(out, 4, id.token);
  put32(out, 8, id.tag);
  const auto k = static_cast<std::uint16_t>(ids.size());
  std::memcpy(out.data() + 12, &k, 2);
  std::memcpy(out.data() + 14, ids.data(), ids.size_bytes());
}

void set_token_tag(std::span<std::byte> copy, std::uint32_t tag) { put32(copy, 8, tag); }

bool read_token(std::span<const std::byte> copy, ReadToken& out) {
  if (copy.size() < token_header_bytes(0)) return false;
  out.id = {get32(copy, 0), get32(copy, 4), get32(copy, 8)};
  std::uint16_t k = 0;
  std::memcpy(&k, copy.data() + 12, 2);
  if (k == 0 || k > 16 || token_header_bytes(k) > copy.size()) return false;
  out.top_k = k;
  std::memcpy(out.ids, copy.data() + 14, 2u * k);
  // Regenerate in 4 KiB pieces: the pattern words first, then the header over them.
  std::byte piece[4096];
  const std::uint64_t seed = token_seed(out.id.source, out.id.token);
  for (std::size_t at = 0; at < copy.size(); at += sizeof piece) {
    const std::size_t n = std::min(sizeof piece, copy.size() - at);
    for (std::size_t i = 0; i < n; i += 8) {
      const std::uint64_t v = pattern_word(seed, (at + i) / 8);
      std::memcpy(piece + i, &v, std::min<std::size_t>(8, n - i));
    }
    const std::size_t header = at == 0 ? token_header_bytes(k) : 0;
    if (std::memcmp(piece + header, copy.data() + at + header, n - std::min(n, header)) != 0) return false;
  }
  return true;
}

namespace {
std::uint64_t expert_seed(const TokenId& token, std::uint32_t expert) {
  return token_seed(token.source, token.token) ^ (std::uint64_t{expert} << 48);
}
float value_of(std::uint64_t seed, std::uint32_t i, std::uint32_t bound) {
  const std::uint64_t h = pattern_word(seed, i);
  return static_cast<float>(static_cast<std::int32_t>(h % (2 * bound + 1)) - static_cast<std::int32_t>(bound));
}
}  // namespace

float expert_value(const TokenId& token, std::uint32_t expert, std::uint32_t i, std::uint32_t top_k) {
  return value_of(expert_seed(token, expert), i, value_bound(top_k));
}

void add_expert_output(std::span<float> acc, const TokenId& token, std::uint32_t expert, float w, std::uint32_t top_k) {
  const std::uint64_t seed = expert_seed(token, expert);
  const std::uint32_t bound = value_bound(top_k);
  for (std::uint32_t i = 0; i < acc.size(); ++i) acc[i] += w * value_of(seed, i, bound);
}

void expert_output(std::span<std::uint16_t> out, const TokenId& token, std::uint32_t expert, std::uint32_t top_k) {
  const std::uint64_t seed = expert_seed(token, expert);
  const std::uint32_t bound = value_bound(top_k);
  for (std::uint32_t i = 0; i < out.size(); ++i) out[i] = coll::float_to_bf16(value_of(seed, i, bound));
}

void to_bf16(std::span<const float> acc, std::span<std::uint16_t> out) {
  for (std::size_t i = 0; i < acc.size(); ++i) out[i] = coll::float_to_bf16(acc[i]);
}

void expected_output(std::span<std::uint16_t> out, const TokenId& token, std::span<const std::uint16_t> ids) {
  std::vector<float> acc(out.size(), 0.0f);
  add_weighted_outputs(acc, token, ids, [](std::uint16_t) { return true; });
  to_bf16(acc, out);
}

}  // namespace fabench::ep
