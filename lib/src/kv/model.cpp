#include "fabench/kv/model.hpp"

#include <algorithm>
#include <array>
#include <cctype>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fabench/base/text.hpp"
#include "fabench/kv/preset.hpp"
#include "fabench/kv/error.hpp"

namespace fabench::kv {

namespace {

struct DtypeSpelling {
  std::string_view name;
  Dtype dtype;
};

// fp32/fp16 are the canonical names (in benchmark names and JSON); f32/f16 are
// fabench-coll's spellings of the same types, accepted so --dtype means one thing.
constexpr std::array<DtypeSpelling, 10> kDtypeSpellings{{
    {"bf16", Dtype::kBf16},
    {"fp16", Dtype::kFp16},
    {"fp8", Dtype::kFp8},
    {"fp32", Dtype::kFp32},
    {"bfloat16", Dtype::kBf16},
    {"float16", Dtype::kFp16},
    {"float8_e4m3fn", Dtype::kFp8},
    {"float32", Dtype::kFp32},
    {"f16", Dtype::kFp16},
    {"f32", Dtype::kFp32},
}};

ModelShape gqa(std::string name, std::uint32_t layers, std::uint32_t kv_heads, std::uint32_t head_dim) {
  return ModelShape{std::move(name), layers, kv_heads, head_dim, false, 0, 0, Dtype::kBf16};
}

ModelShape mla(std::string name, std::uint32_t layers, std::uint32_t kv_lora_rank, std::uint32_t rope_dim) {
  return ModelShape{std::move(name), layers, 1, kv_lora_rank + rope_dim, true, kv_lora_rank, rope_dim, Dtype::kBf16};
}

// Numbers from each model's config.json on the Hugging Face hub (head_dim = hidden_size /
// num_attention_heads where the config has no head_dim).
const std::vector<ModelShape>& presets() {
  static const std::vector<ModelShape> kPresets{
      gqa("llama-3.1-8b", 32, 8, 128),     // hidden 4096, 32 heads
      gqa("llama-3.1-70b", 80, 8, 128),    // hidden 8192, 64 heads
      gqa("llama-3.1-405b", 126, 8, 128),  // hidden 16384, 128 heads
      gqa("qwen2.5-72b", 80, 8, 128),      // hidden 8192, 64 heads
      gqa("mixtral-8x7b", 32, 8, 128),     // hidden 4096, 32 heads
      mla("deepseek-v3", 61, 512, 64),    mla("deepseek-r1", 61, 512, 64),
      gqa("qwen3-8b", 36, 8, 128),  // explicit head_dim 128 (hidden 4096, 32 heads)
  };
  return kPresets;
}

}  // namespace

std::uint32_t dtype_bytes(Dtype t) {
  switch (t) {
    case Dtype::kBf16: return 2;
    case Dtype::kFp16: return 2;
    case Dtype::kFp8: return 1;
    case Dtype::kFp32: return 4;
  }
  return 0;
}

std::string_view dtype_name(Dtype t) {
  switch (t) {
    case Dtype::kBf16: return "bf16";
    case Dtype::kFp16: return "fp16";
    case Dtype::kFp8: return "fp8";
    case Dtype::kFp32: return "fp32";
  }
  return "?";
}

Dtype parse_dtype(std::string_view s) {
  const std::string l = to_lower(s);
  for (const auto& sp : kDtypeSpellings) {
    if (sp.name == l) return sp.dtype;
  }
  throw KvError(
      fmt::format("unknown dtype \"{}\" (bf16, fp16 or f16, fp8, fp32 or f32, or bfloat16, float16, "
                  "float8_e4m3fn, float32)",
                  s));
}

std::uint64_t ModelShape::bytes_per_token() const {
  return std::uint64_t{layers} * kv_tensors() * cached_heads() * head_elems() * dtype_bytes(dtype);
}

void validate(const ModelShape& m) {
  const auto need = [&](std::uint32_t v, std::string_view field) {
    if (v == 0) throw KvError(fmt::format("model {}: {} must be positive", m.name, field));
  };
  need(m.layers, "layers");
  if (m.mla) {
    need(m.kv_lora_rank, "kv_lora_rank");
  } else {
    need(m.kv_heads, "kv_heads");
    need(m.head_dim, "head_dim");
  }
  // Sizes that wrap are not sizes (found by fuzz/kv_config: a config.json's fields go up to 2^32 - 1).
  if (m.mla && std::uint64_t{m.kv_lora_rank} + m.qk_rope_head_dim != m.head_elems()) {
    throw KvError(fmt::format("model {}: kv_lora_rank + qk_rope_head_dim exceeds 2^32 - 1", m.name));
  }
  std::uint64_t bytes = m.layers;
  for (const std::uint64_t f : {std::uint64_t{m.kv_tensors()}, std::uint64_t{m.cached_heads()},
                                std::uint64_t{m.head_elems()}, std::uint64_t{dtype_bytes(m.dtype)}}) {
    if (f != 0 && bytes > UINT64_MAX / f) throw KvError(fmt::format("model {}: bytes per token exceed 2^64", m.name));
    bytes *= f;
  }
}

ModelShape preset(std::string_view name) { return preset_named(presets(), name); }

const std::vector<std::string>& preset_names() {
  static const std::vector<std::string> kNames = preset_names_of(presets());
  return kNames;
}

}  // namespace fabench::kv
