#include "fabench/ep/model.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fabench/base/text.hpp"
#include "fabench/ep/error.hpp"
#include "fabench/kv/hf_fields.hpp"
#include "fabench/kv/preset.hpp"

namespace fabench::ep {

namespace {

// From each model's config.json on the Hugging Face hub.
const std::vector<MoeShape>& presets() {
  static const std::vector<MoeShape> kPresets{
      {"deepseek-v3", 7168, 256, 8, 8, 4},       // n_routed_experts 256, n_group 8, topk_group 4
      {"deepseek-r1", 7168, 256, 8, 8, 4},       // the same MoE as V3
      {"qwen3-235b-a22b", 4096, 128, 8, 1, 1},   // num_experts 128
      {"mixtral-8x7b", 4096, 8, 2, 1, 1},        // num_local_experts 8
      {"gpt-oss-120b", 2880, 128, 4, 1, 1},      // num_local_experts 128
      {"llama-4-maverick", 5120, 128, 1, 1, 1},  // text_config: num_local_experts 128
  };
  return kPresets;
}

}  // namespace

void validate(const MoeShape& m) {
  const auto bad = [&](std::string_view what) { fail(fmt::format("model {}: {}", m.name, what)); };
  if (m.hidden < kMinHidden) bad(fmt::format("hidden_size {} is below {}", m.hidden, kMinHidden));
  if (m.experts == 0) bad("has no routed experts");
  if (m.experts > 65535) bad(fmt::format("{} routed experts exceed 65535", m.experts));
  if (m.top_k == 0 || m.top_k > kMaxTopK) bad(fmt::format("num_experts_per_tok {} is not in 1..{}", m.top_k, kMaxTopK));
  if (m.n_group == 0 || m.experts % m.n_group != 0) {
    bad(fmt::format("n_group {} does not divide the {} experts", m.n_group, m.experts));
  }
  if (m.topk_group == 0 || m.topk_group > m.n_group) {
    bad(fmt::format("topk_group {} is not in 1..n_group ({})", m.topk_group, m.n_group));
  }
  if (m.top_k > m.topk_group * m.experts_per_group()) {
    bad(fmt::format("num_experts_per_tok {} exceeds the {} experts of topk_group {} groups", m.top_k,
                    m.topk_group * m.experts_per_group(), m.topk_group));
  }
}

MoeShape preset(std::string_view name) { return kv::preset_named(presets(), name); }

const std::vector<std::string>& preset_names() {
  static const std::vector<std::string> kNames = kv::preset_names_of(presets());
  return kNames;
}

MoeShape load_hf_config(const std::filesystem::path& path) {
  const std::string file = path.string();
  const nlohmann::json root = kv::parse_hf_file(path, file);
  if (!root.is_object()) fail(fmt::format("{}: not a JSON object", file));
  const kv::HfFields top{file, root, ""};
  const nlohmann::json* text_config = top.find("text_config");
  const bool nested = !top.has("hidden_size") && text_config != nullptr && text_config->is_object();
  const kv::HfFields f = nested ? kv::HfFields{file, *text_config, "text_config."} : top;

  MoeShape m;
  m.hidden = f.required("hidden_size");
  for (const std::string_view key : {"n_routed_experts", "num_experts", "num_local_experts"}) {
    if (const auto e = f.positive(key)) {
      m.experts = *e;
      break;
    }
  }
  if (m.experts == 0)
    f.fail("n_routed_experts", "is missing (and so are num_experts and num_local_experts): not a MoE model");
  m.top_k = f.required("num_experts_per_tok");
  const auto groups = f.positive("n_group");
  const auto topk_group = f.positive("topk_group");
  if (groups.has_value() != topk_group.has_value()) {
    f.fail(groups ? "topk_group" : "n_group", "is missing (n_group and topk_group come together)");
  }
  m.n_group = groups.value_or(1);
  m.topk_group = topk_group.value_or(1);
  if (!groups) m.topk_group = 1;
  m.name = hf_model_name(top, f, path);
  validate(m);
  return m;
}

std::string_view dtype_name(DispatchDtype t) { return t == DispatchDtype::kFp8 ? "fp8" : "bf16"; }

DispatchDtype parse_dispatch_dtype(std::string_view s) {
  const std::string l = to_lower(s);
  if (l == "bf16" || l == "bfloat16") return DispatchDtype::kBf16;
  if (l == "fp8" || l == "float8_e4m3fn") return DispatchDtype::kFp8;
  fail(fmt::format("unknown dispatch dtype \"{}\" (bf16 or fp8)", s));
}

std::uint64_t dispatch_token_bytes(std::uint32_t hidden, DispatchDtype t) {
  if (t == DispatchDtype::kBf16) return 2ull * hidden;
  return hidden + 4ull * ((hidden + 127) / 128);
}

std::uint64_t combine_token_bytes(std::uint32_t hidden) { return 2ull * hidden; }

Placement::Placement(std::uint32_t experts, std::uint32_t ranks)
    : experts_(experts), ranks_(ranks), base_(ranks ? experts / ranks : 0), extra_(ranks ? experts % ranks : 0) {
  if (ranks == 0 || ranks > experts) {
    fail(fmt::format("{} experts cannot be placed on {} ranks (every rank holds at least one expert)", experts, ranks));
  }
}

std::uint32_t Placement::first(std::uint32_t rank) const { return rank * base_ + std::min(rank, extra_); }

std::uint32_t Placement::count(std::uint32_t rank) const { return base_ + (rank < extra_ ? 1u : 0u); }

std::uint32_t Placement::owner(std::uint32_t expert) const {
  const std::uint32_t big = extra_ * (base_ + 1);  // experts held by the ranks with one more
  return expert < big ? expert / (base_ + 1) : extra_ + (expert - big) / base_;
}

}  // namespace fabench::ep
