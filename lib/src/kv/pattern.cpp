#include "fabench/kv/pattern.hpp"

#include <bit>
#include <cstring>
#include <stdexcept>

#include "fabench/base/error.hpp"

namespace fabench::kv {

namespace {

constexpr std::uint64_t kStep = 0x9e3779b97f4a7c15ull;

std::uint64_t mix(std::uint64_t x) {
  x += kStep;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::uint64_t chunk_base(std::uint64_t seed, std::uint32_t r, std::uint32_t l, std::uint32_t k, std::uint32_t b,
                         std::uint32_t h) {
  const std::uint64_t a = (std::uint64_t{r} << 32) | b;
  const std::uint64_t c = (std::uint64_t{l} << 33) | (std::uint64_t{k} << 32) | h;
  return mix(mix(mix(seed) ^ a) ^ c);
}

// Words are stored little-endian so that a pool means the same on every host.
std::uint64_t to_le(std::uint64_t v) {
  if constexpr (std::endian::native == std::endian::big) return __builtin_bswap64(v);
  return v;
}

void write_chunk(std::byte* p, std::uint64_t bytes, std::uint64_t base) {
  const std::uint64_t words = bytes / 8;
  std::uint64_t v = base;
  for (std::uint64_t w = 0; w < words; ++w, v += kStep) {
    const std::uint64_t le = to_le(v);
    std::memcpy(p + w * 8, &le, 8);
  }
  if (const std::uint64_t tail = bytes % 8; tail != 0) {
    const std::uint64_t le = to_le(v);
    std::memcpy(p + words * 8, &le, tail);
  }
}

bool chunk_ok(const std::byte* p, std::uint64_t bytes, std::uint64_t base) {
  const std::uint64_t words = bytes / 8;
  std::uint64_t v = base;
  std::uint64_t diff = 0;
  for (std::uint64_t w = 0; w < words; ++w, v += kStep) {
    std::uint64_t got;
    std::memcpy(&got, p + w * 8, 8);
    diff |= got ^ to_le(v);
  }
  if (const std::uint64_t tail = bytes % 8; tail != 0) {
    const std::uint64_t le = to_le(v);
    diff |= static_cast<std::uint64_t>(std::memcmp(p + words * 8, &le, tail) != 0);
  }
  return diff == 0;
}

// Calls f(page offset, r, l, k, b) for every page of the rank's pool.
template <class F>
void for_each_page(const KvSpec& s, const PoolMap& map, F&& f) {
  const std::uint32_t blocks = blocks_per_request(s);
  for (std::uint32_t r = 0; r < s.batch; ++r) {
    for (std::uint32_t l = 0; l < s.model.layers; ++l) {
      for (std::uint32_t k = 0; k < s.model.kv_tensors(); ++k) {
        for (std::uint32_t b = 0; b < blocks; ++b) f(map.page_offset(r, l, k, b), r, l, k, b);
      }
    }
  }
}

void check_size(std::size_t have, std::uint64_t need) {
  if (have < need) throw RunError("kv pool smaller than pool_bytes");
}

}  // namespace

void fill_pool(const KvSpec& s, Side side, std::uint32_t rank, std::span<std::byte> pool) {
  validate(s);
  const PoolMap map(s, side, rank);
  check_size(pool.size(), map.pool_bytes());
  const std::uint64_t chunk = head_chunk_bytes(s);
  const HeadRange heads = map.heads();
  for_each_page(s, map, [&](std::uint64_t off, std::uint32_t r, std::uint32_t l, std::uint32_t k, std::uint32_t b) {
    for (std::uint32_t i = 0; i < heads.count; ++i) {
      write_chunk(pool.data() + off + i * chunk, chunk, chunk_base(s.seed, r, l, k, b, heads.first + i));
    }
  });
}

std::uint64_t count_wrong_pages(const KvSpec& s, Side side, std::uint32_t rank, std::span<const std::byte> pool) {
  validate(s);
  const PoolMap map(s, side, rank);
  check_size(pool.size(), map.pool_bytes());
  const std::uint64_t chunk = head_chunk_bytes(s);
  const HeadRange heads = map.heads();
  std::uint64_t wrong = 0;
  for_each_page(s, map, [&](std::uint64_t off, std::uint32_t r, std::uint32_t l, std::uint32_t k, std::uint32_t b) {
    for (std::uint32_t i = 0; i < heads.count; ++i) {
      if (!chunk_ok(pool.data() + off + i * chunk, chunk, chunk_base(s.seed, r, l, k, b, heads.first + i))) {
        ++wrong;
        return;
      }
    }
  });
  return wrong;
}

void execute_in_memory(std::span<const PairPlan> plans, std::span<const std::span<const std::byte>> prefill_pools,
                       std::span<const std::span<std::byte>> decode_pools) {
  const auto range = [](auto pool, std::uint64_t off, std::uint64_t len) {
    if (off > pool.size() || len > pool.size() - off) throw RunError("kv WR outside its pool");
    return pool.data() + off;
  };
  for (const PairPlan& plan : plans) {
    if (plan.prefill_rank >= prefill_pools.size() || plan.decode_rank >= decode_pools.size()) {
      throw RunError("kv plan rank without a pool");
    }
    const std::span<const std::byte> src = prefill_pools[plan.prefill_rank];
    const std::span<std::byte> dst = decode_pools[plan.decode_rank];
    const bool push = plan.direction == Direction::kPush;
    for (const Wr& wr : plan.wrs) {
      std::uint64_t remote = wr.remote_offset;
      for (const Segment& seg : plan.local(wr)) {
        const std::uint64_t from = push ? seg.offset : remote;
        const std::uint64_t to = push ? remote : seg.offset;
        std::memcpy(range(dst, to, seg.length), range(src, from, seg.length), seg.length);
        remote += seg.length;
      }
      if (remote - wr.remote_offset != wr.length) throw RunError("kv WR whose segments do not sum to its length");
    }
  }
}

}  // namespace fabench::kv
