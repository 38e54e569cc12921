// load_hf_config: a Hugging Face config.json -> ModelShape, with one-line errors naming the file
// and the field.
#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "fabench/kv/error.hpp"
#include "fabench/kv/hf_fields.hpp"
#include "fabench/kv/model.hpp"

namespace fabench::kv {

namespace {

using nlohmann::json;

void read_attention(const HfFields& f, ModelShape& m) {
  if (f.has("kv_lora_rank") || f.has("qk_rope_head_dim")) {
    m.mla = true;
    m.kv_lora_rank = f.required("kv_lora_rank");
    m.qk_rope_head_dim = f.required("qk_rope_head_dim");
    m.kv_heads = 1;
    m.head_dim = m.kv_lora_rank + m.qk_rope_head_dim;
    return;
  }
  const auto kv_heads = f.positive("num_key_value_heads");
  const auto heads = f.positive("num_attention_heads");
  if (!kv_heads && !heads) f.fail("num_key_value_heads", "is missing (and so is num_attention_heads)");
  m.kv_heads = kv_heads ? *kv_heads : *heads;
  if (const auto head_dim = f.positive("head_dim")) {
    m.head_dim = *head_dim;
    return;
  }
  if (!heads) f.fail("num_attention_heads", "is missing (needed for head_dim, which is absent)");
  const std::uint32_t hidden = f.required("hidden_size");
  if (hidden % *heads != 0) {
    f.fail("hidden_size", fmt::format("({}) is not a multiple of num_attention_heads ({})", hidden, *heads));
  }
  m.head_dim = hidden / *heads;
}

void read_dtype(const HfFields& f, ModelShape& m) {
  const std::string_view key = f.has("torch_dtype") ? "torch_dtype" : "dtype";
  const auto s = f.text(key);
  if (!s) return;
  try {
    m.dtype = parse_dtype(*s);
  } catch (const KvError&) {
    f.fail(key, fmt::format("must be one of bfloat16, float16, float32, float8_e4m3fn (got \"{}\")", *s));
  }
}

}  // namespace

ModelShape load_hf_config(const std::filesystem::path& path) {
  const std::string file = path.string();
  const json root = parse_hf_file(path, file);
  if (!root.is_object()) throw KvError(fmt::format("{}: not a JSON object", file));
  const HfFields top{file, root, ""};
  const json* text_config = top.find("text_config");
  const bool nested = !top.has("num_hidden_layers") && text_config != nullptr && text_config->is_object();
  const HfFields f = nested ? HfFields{file, *text_config, "text_config."} : top;

  ModelShape m;
  m.layers = f.required("num_hidden_layers");
  read_attention(f, m);
  read_dtype(f, m);
  if (nested && !f.has("torch_dtype") && !f.has("dtype")) read_dtype(top, m);
  m.name = hf_model_name(top, f, path);
  return m;
}

}  // namespace fabench::kv
