// lib/kv model shapes: dtypes, every preset's bytes per token, and Hugging Face config.json
// loading with its one-line errors, from files written to a temporary directory.
#include <catch2/catch.hpp>

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "fabench/kv/error.hpp"
#include "fabench/kv/model.hpp"
#include "temp_dir.hpp"

using namespace fabench::kv;
namespace fs = std::filesystem;
using fabench::test::TempDir;

namespace {

std::string error_of(const fs::path& p) {
  try {
    (void)load_hf_config(p);
  } catch (const KvError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("kv: dtypes, our names and Hugging Face's", "[kv]") {
  CHECK(dtype_bytes(Dtype::kBf16) == 2);
  CHECK(dtype_bytes(Dtype::kFp16) == 2);
  CHECK(dtype_bytes(Dtype::kFp8) == 1);
  CHECK(dtype_bytes(Dtype::kFp32) == 4);
  CHECK(parse_dtype("bf16") == Dtype::kBf16);
  CHECK(parse_dtype("bfloat16") == Dtype::kBf16);
  CHECK(parse_dtype("float16") == Dtype::kFp16);
  CHECK(parse_dtype("FP8") == Dtype::kFp8);
  CHECK(parse_dtype("float8_e4m3fn") == Dtype::kFp8);
  CHECK(parse_dtype("float32") == Dtype::kFp32);
  CHECK(dtype_name(Dtype::kFp8) == "fp8");
  CHECK_THROWS_WITH(parse_dtype("int8"),
                    "unknown dtype \"int8\" (bf16, fp16 or f16, fp8, fp32 or f32, or bfloat16, float16, "
                    "float8_e4m3fn, float32)");
}

TEST_CASE("kv: every preset's bytes per token, by hand", "[kv]") {
  // 2 x layers x kv_heads x head_dim x 2 bytes; MLA: layers x (512 + 64) x 2.
  CHECK(preset("llama-3.1-8b").bytes_per_token() == 2 * 32 * 8 * 128 * 2);  // 131 072
  CHECK(preset("llama-3.1-70b").bytes_per_token() == 327680);
  CHECK(preset("llama-3.1-405b").bytes_per_token() == 2 * 126 * 8 * 128 * 2);  // 516 096
  CHECK(preset("qwen2.5-72b").bytes_per_token() == 327680);
  CHECK(preset("mixtral-8x7b").bytes_per_token() == 131072);
  CHECK(preset("deepseek-v3").bytes_per_token() == 70272);
  CHECK(preset("deepseek-r1").bytes_per_token() == 70272);
  CHECK(preset("qwen3-8b").bytes_per_token() == 2 * 36 * 8 * 128 * 2);  // 147 456
  const ModelShape r1 = preset("DeepSeek-R1");
  CHECK(r1.mla);
  CHECK(r1.kv_tensors() == 1);
  CHECK(r1.cached_heads() == 1);
  CHECK(r1.head_elems() == 576);
  CHECK(preset_names().size() == 8);
  CHECK_THROWS_WITH(preset("llama-2"),
                    "unknown model \"llama-2\" (presets: llama-3.1-8b, llama-3.1-70b, llama-3.1-405b, qwen2.5-72b, "
                    "mixtral-8x7b, deepseek-v3, deepseek-r1, qwen3-8b)");
}

TEST_CASE("kv: config.json, MHA, GQA, MLA and explicit head_dim", "[kv]") {
  const TempDir dir;
  SECTION("MHA: no num_key_value_heads, head_dim from hidden_size") {
    const ModelShape m = load_hf_config(dir.write("config.json", R"({"model_type": "llama", "num_hidden_layers": 32,
        "num_attention_heads": 32, "hidden_size": 4096, "torch_dtype": "float16"})"));
    CHECK(m.name == "llama");
    CHECK(m.layers == 32);
    CHECK(m.kv_heads == 32);
    CHECK(m.head_dim == 128);
    CHECK(!m.mla);
    CHECK(m.dtype == Dtype::kFp16);
    CHECK(m.bytes_per_token() == 2 * 32 * 32 * 128 * 2);
  }
  SECTION("GQA: Llama-3.1-70B's own fields") {
    const ModelShape m = load_hf_config(dir.write("config.json", R"({"_name_or_path": "meta-llama/Llama-3.1-70B",
        "num_hidden_layers": 80, "num_attention_heads": 64, "num_key_value_heads": 8, "hidden_size": 8192,
        "torch_dtype": "bfloat16", "rope_scaling": {"factor": 8.0}})"));
    CHECK(m.name == "meta-llama/Llama-3.1-70B");
    CHECK(m.bytes_per_token() == 327680);
  }
  SECTION("MLA: DeepSeek-R1's fields; head counts are not read") {
    const ModelShape m = load_hf_config(dir.write("r1/config.json", R"({"model_type": "deepseek_v3",
        "num_hidden_layers": 61, "num_attention_heads": 128, "num_key_value_heads": 128, "hidden_size": 7168,
        "kv_lora_rank": 512, "qk_rope_head_dim": 64, "q_lora_rank": 1536, "torch_dtype": "bfloat16"})"));
    CHECK(m.mla);
    CHECK(m.kv_lora_rank == 512);
    CHECK(m.qk_rope_head_dim == 64);
    CHECK(m.bytes_per_token() == 70272);
  }
  SECTION("explicit head_dim wins over hidden_size / heads (Qwen3-8B); no dtype -> bf16; name from the stem") {
    const ModelShape m = load_hf_config(dir.write("qwen3.json", R"({"num_hidden_layers": 36,
        "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_size": 5120, "head_dim": 128})"));
    CHECK(m.name == "qwen3");
    CHECK(m.head_dim == 128);
    CHECK(m.dtype == Dtype::kBf16);
    CHECK(m.bytes_per_token() == 147456);
  }
  SECTION("a multimodal config's text_config") {
    const ModelShape m = load_hf_config(dir.write("config.json", R"({"model_type": "mllama", "torch_dtype": "float32",
        "text_config": {"num_hidden_layers": 40, "num_attention_heads": 32, "num_key_value_heads": 8,
        "hidden_size": 4096}})"));
    CHECK(m.layers == 40);
    CHECK(m.kv_heads == 8);
    CHECK(m.dtype == Dtype::kFp32);
  }
}

TEST_CASE("kv: config.json errors are one line naming the file and the field", "[kv]") {
  const TempDir dir;
  const auto check = [&](const std::string& text, const std::string& expected_tail) {
    const fs::path p = dir.write("config.json", text);
    CHECK(error_of(p) == p.string() + ": " + expected_tail);
  };
  check(R"({"num_attention_heads": 64, "hidden_size": 8192})", "num_hidden_layers is missing");
  check(R"({"num_hidden_layers": "80", "num_attention_heads": 64, "hidden_size": 8192})",
        R"(num_hidden_layers must be a positive integer (got "80"))");
  check(R"({"num_hidden_layers": 0, "num_attention_heads": 64})",
        "num_hidden_layers must be a positive integer (got 0)");
  check(R"({"num_hidden_layers": 80, "num_key_value_heads": -8, "num_attention_heads": 64})",
        "num_key_value_heads must be a positive integer (got -8)");
  check(R"({"num_hidden_layers": 80.5})", "num_hidden_layers must be a positive integer (got 80.5)");
  check(R"({"num_hidden_layers": 80, "hidden_size": 8192})",
        "num_key_value_heads is missing (and so is num_attention_heads)");
  check(R"({"num_hidden_layers": 80, "num_key_value_heads": 8, "hidden_size": 8192})",
        "num_attention_heads is missing (needed for head_dim, which is absent)");
  check(R"({"num_hidden_layers": 80, "num_attention_heads": 64})", "hidden_size is missing");
  check(R"({"num_hidden_layers": 80, "num_attention_heads": 64, "hidden_size": 8190})",
        "hidden_size (8190) is not a multiple of num_attention_heads (64)");
  check(R"({"num_hidden_layers": 61, "kv_lora_rank": 512})", "qk_rope_head_dim is missing");
  check(R"({"num_hidden_layers": 80, "num_attention_heads": 64, "hidden_size": 8192, "torch_dtype": "int8"})",
        R"(torch_dtype must be one of bfloat16, float16, float32, float8_e4m3fn (got "int8"))");
  check(R"({"num_hidden_layers": 80, "num_attention_heads": 64, "hidden_size": 8192, "torch_dtype": 16})",
        "torch_dtype must be a string (got 16)");
  check(R"([80, 8, 128])", "not a JSON object");
  check("{\"num_hidden_layers\": 80,\n  oops}", "not JSON (parse error at byte 29)");  // the o, 1-based
  const fs::path missing = fs::temp_directory_path() / "fabench-kv-no-such-dir" / "config.json";
  CHECK(error_of(missing) == missing.string() + ": cannot open (no such file, or not readable)");
}
