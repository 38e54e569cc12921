// Model shapes as the KV cache sees them: element types, ModelShape and its bytes per token,
// the built-in presets (numbers from each model's published Hugging Face config.json) and the
// loader of such a config.json.
//
// Bytes per token (DESIGN.md): 2 x layers x kv_heads x head_dim x dtype bytes for MHA/GQA (a K
// and a V tensor per layer); layers x (kv_lora_rank + qk_rope_head_dim) x dtype bytes for MLA,
// which caches one compressed latent per token and layer, shared by all heads (no K/V split).
// Llama-3.1-70B BF16 = 327 680 B/token; DeepSeek-R1 BF16 = 70 272 B/token.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace fabench::kv {

enum class Dtype : std::uint8_t { kBf16, kFp16, kFp8, kFp32 };

[[nodiscard]] std::uint32_t dtype_bytes(Dtype t);
[[nodiscard]] std::string_view dtype_name(Dtype t);  // "bf16", "fp16", "fp8", "fp32"
// Our names and Hugging Face's torch_dtype spellings ("bfloat16", "float16", "float32",
// "float8_e4m3fn"), any case. Anything else: KvError listing the accepted names.
[[nodiscard]] Dtype parse_dtype(std::string_view s);

struct ModelShape {
  std::string name;
  std::uint32_t layers = 0;
  // MHA/GQA: the K/V heads and their width. MLA: 1 and kv_lora_rank + qk_rope_head_dim (the
  // cached latent is one "head"), so that the layout code has one shape for both.
  std::uint32_t kv_heads = 0;
  std::uint32_t head_dim = 0;
  bool mla = false;
  std::uint32_t kv_lora_rank = 0;      // MLA only
  std::uint32_t qk_rope_head_dim = 0;  // MLA only
  Dtype dtype = Dtype::kBf16;

  // Tensors per layer in the cache: 2 (K and V) for MHA/GQA, 1 (the latent) for MLA.
  [[nodiscard]] std::uint32_t kv_tensors() const { return mla ? 1u : 2u; }
  // Heads the cache splits across TP ranks: kv_heads, or 1 for MLA (the latent is not split).
  [[nodiscard]] std::uint32_t cached_heads() const { return mla ? 1u : kv_heads; }
  // Elements per token of one cached head: head_dim, or the latent's width for MLA.
  [[nodiscard]] std::uint32_t head_elems() const { return mla ? kv_lora_rank + qk_rope_head_dim : head_dim; }
  [[nodiscard]] std::uint64_t bytes_per_token() const;
};

// Throws KvError naming the field when a shape is unusable (zero layers, heads, width).
void validate(const ModelShape& m);

// Presets: llama-3.1-8b, llama-3.1-70b, llama-3.1-405b, qwen2.5-72b, mixtral-8x7b, deepseek-v3,
// deepseek-r1, qwen3-8b; all bf16. Lookup ignores case; an unknown name is a KvError listing them.
[[nodiscard]] ModelShape preset(std::string_view name);
[[nodiscard]] const std::vector<std::string>& preset_names();

// Reads a Hugging Face config.json (or the "text_config" object inside one, for multimodal
// models whose top level has no num_hidden_layers):
//   num_hidden_layers (required); num_key_value_heads, else num_attention_heads;
//   head_dim, else hidden_size / num_attention_heads (must divide);
//   kv_lora_rank and qk_rope_head_dim both present -> MLA (the head counts are then not read);
//   torch_dtype (or "dtype", newer transformers), bf16 when absent;
//   name: "_name_or_path", else "model_type", else the file's stem.
// A null value counts as absent. Every error is one KvError line naming the file and the field:
//   "<path>: num_hidden_layers is missing"
//   "<path>: num_hidden_layers must be a positive integer (got "80")"
//   "<path>: not JSON (parse error at byte 17)"
[[nodiscard]] ModelShape load_hf_config(const std::filesystem::path& path);

}  // namespace fabench::kv
