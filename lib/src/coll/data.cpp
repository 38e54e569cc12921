#include "fabench/coll/data.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace fabench::coll {

namespace {

// splitmix64's finaliser: a good 64-bit mix, cheap enough for every element of every rank.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

struct SumShape {
  std::int64_t vmax;  // contributions are 1..vmax
  std::uint64_t q;    // one rank in q contributes to each element
};

// Largest integer the type holds exactly with every integer below it: 2^(significand bits).
std::int64_t exact_limit(DType t) {
  switch (t) {
    case DType::kF32: return std::int64_t{1} << 24;
    case DType::kF16: return std::int64_t{1} << 11;
    case DType::kBF16: return std::int64_t{1} << 8;
  }
  return 0;
}

SumShape sum_shape(const DataSpec& d) {
  const std::int64_t vmax = d.dtype == DType::kF32 ? 255 : (d.dtype == DType::kF16 ? 15 : 3);
  const std::uint64_t contributors = static_cast<std::uint64_t>(exact_limit(d.dtype) / vmax);
  const std::uint64_t n = std::max<std::uint64_t>(d.nranks, 1);
  return {vmax, (n + contributors - 1) / contributors};
}

std::int64_t min_max_bound(DType t) { return t == DType::kF32 ? (std::int64_t{1} << 20) : exact_limit(t); }

std::int64_t reduce_ints(ReduceOp op, std::int64_t a, std::int64_t b) {
  switch (op) {
    case ReduceOp::kSum: return a + b;
    case ReduceOp::kMin: return std::min(a, b);
    case ReduceOp::kMax: return std::max(a, b);
  }
  return a;
}

// Element i of the reduction over all ranks, from the ranks' integer values.
std::int64_t reduced_value(const DataSpec& d, std::uint64_t i) {
  std::int64_t acc = input_value(d, 0, i);
  for (std::uint32_t r = 1; r < d.nranks; ++r) acc = reduce_ints(d.op, acc, input_value(d, r, i));
  return acc;
}

void store_int(DType t, std::byte* p, std::int64_t v) { store_element(t, p, static_cast<float>(v)); }

}  // namespace

std::int32_t input_value(const DataSpec& d, std::uint32_t rank, std::uint64_t i) {
  const std::uint64_t h_elem = mix(mix(d.seed) ^ i);
  const std::uint64_t h = mix(h_elem ^ (static_cast<std::uint64_t>(rank) << 48) ^ 0x5bd1e995ull);
  if (d.op != ReduceOp::kSum) {
    const std::int64_t k = min_max_bound(d.dtype);
    return static_cast<std::int32_t>(static_cast<std::int64_t>(h % static_cast<std::uint64_t>(2 * k + 1)) - k);
  }
  const SumShape s = sum_shape(d);
  if ((rank + h_elem % s.q) % s.q != 0) return 0;
  return static_cast<std::int32_t>(1 + static_cast<std::int64_t>(h % static_cast<std::uint64_t>(s.vmax)));
}

void fill_input(const DataSpec& d, std::uint32_t rank, std::byte* buf, std::uint64_t count) {
  const std::uint32_t size = dtype_size(d.dtype);
  for (std::uint64_t i = 0; i < count; ++i) store_int(d.dtype, buf + i * size, input_value(d, rank, i));
}

void reference_reduction(const DataSpec& d, std::uint64_t count, std::byte* out) {
  const std::uint32_t size = dtype_size(d.dtype);
  for (std::uint64_t i = 0; i < count; ++i) store_int(d.dtype, out + i * size, reduced_value(d, i));
}

void expected_output(const DataSpec& d, Collective c, std::uint32_t rank, std::uint64_t count, std::byte* out) {
  const std::uint32_t size = dtype_size(d.dtype);
  const std::uint64_t block = d.nranks == 0 ? 0 : count / d.nranks;
  switch (c) {
    case Collective::kAllReduce: return reference_reduction(d, count, out);
    case Collective::kReduceScatter:
      for (std::uint64_t e = 0; e < block; ++e) store_int(d.dtype, out + e * size, reduced_value(d, rank * block + e));
      return;
    case Collective::kAllGather:  // block b is rank b's input
      for (std::uint64_t e = 0; e < block * d.nranks; ++e) {
        store_int(d.dtype, out + e * size, input_value(d, static_cast<std::uint32_t>(e / block), e % block));
      }
      return;
    case Collective::kAllToAll:  // block b is block `rank` of rank b's input
      for (std::uint64_t e = 0; e < block * d.nranks; ++e) {
        const auto from = static_cast<std::uint32_t>(e / block);
        store_int(d.dtype, out + e * size, input_value(d, from, rank * block + e % block));
      }
      return;
  }
}

std::uint64_t count_wrong(DType t, const std::byte* got, const std::byte* expected, std::uint64_t count) {
  const std::uint32_t size = dtype_size(t);
  std::uint64_t wrong = 0;
  for (std::uint64_t i = 0; i < count; ++i) wrong += std::memcmp(got + i * size, expected + i * size, size) != 0;
  return wrong;
}

void fill_random(DType t, std::uint32_t rank, std::byte* buf, std::uint64_t count, std::uint64_t seed) {
  const std::uint32_t size = dtype_size(t);
  const std::uint64_t base = mix(mix(seed) ^ (static_cast<std::uint64_t>(rank) + 0x51ed27ull));
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint64_t h = mix(base ^ i);
    // Significand in [1, 2) from 23 random bits, exponent -7..-1, random sign; one element in
    // eight a zero of random sign (min and max of +0 and -0 depend on the operands' order).
    const float significand = 1.0f + static_cast<float>(h & 0x7fffffu) * 0x1p-23f;
    const int exponent = -1 - static_cast<int>((h >> 23) % 7);
    const bool negative = ((h >> 40) & 1u) != 0;
    const bool zero = ((h >> 44) & 7u) == 0;
    const float v = zero ? 0.0f : std::ldexp(significand, exponent);
    store_element(t, buf + i * size, negative ? -v : v);
  }
}

}  // namespace fabench::coll
