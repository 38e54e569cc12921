// Mixture-of-experts shapes as expert-parallel traffic sees them: the hidden width a token
// carries, the routed experts, top-k and DeepSeek's group limit; the built-in presets (numbers
// from each model's published Hugging Face config.json), the loader of such a config.json, the
// placement of experts on ranks, and the bytes one token copy takes on the wire.
//
// Bytes per token copy (docs/design/ep.md): dispatch bf16 2 x hidden; dispatch fp8 hidden +
// ceil(hidden / 128) x 4 (one fp32 scale per 128 elements, DeepEP's layout); combine bf16
// 2 x hidden. DeepSeek-V3 (hidden 7168): 14336, 7392 and 14336 bytes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace fabench::ep {

struct MoeShape {
  std::string name;
  std::uint32_t hidden = 0;      // hidden_size
  std::uint32_t experts = 0;     // routed experts (shared experts move no traffic)
  std::uint32_t top_k = 0;       // num_experts_per_tok
  std::uint32_t n_group = 1;     // expert groups (DeepSeek: 8)
  std::uint32_t topk_group = 1;  // groups a token may route into (DeepSeek: 4); == n_group: no limit

  [[nodiscard]] bool group_limited() const { return topk_group < n_group; }
  [[nodiscard]] std::uint32_t experts_per_group() const { return experts / n_group; }
};

// The largest top-k whose combine stays exact in bf16 (payload.hpp) and whose ids fit the
// payload header of the smallest token.
inline constexpr std::uint32_t kMaxTopK = 16;
// The smallest hidden width: a token must hold the payload header (payload.hpp).
inline constexpr std::uint32_t kMinHidden = 64;

// Throws the user error naming the model and the field when the shape is unusable: hidden below
// kMinHidden, no experts, top-k 0 or over kMaxTopK or over the experts the group limit allows,
// groups that do not divide the experts, topk_group over n_group.
void validate(const MoeShape& m);

// Presets: deepseek-v3, deepseek-r1, qwen3-235b-a22b, mixtral-8x7b, gpt-oss-120b,
// llama-4-maverick. Lookup ignores case; an unknown name is a user error listing them.
[[nodiscard]] MoeShape preset(std::string_view name);
[[nodiscard]] const std::vector<std::string>& preset_names();

// Reads a Hugging Face config.json (or its "text_config" object when the top level has no
// hidden_size, as multimodal models nest it): hidden_size (required); the experts from
// n_routed_experts, else num_experts, else num_local_experts (one required);
// num_experts_per_tok (required); n_group and topk_group (both or neither; 1 when absent).
// Errors are fabench-kv's: one line naming the file and the field.
[[nodiscard]] MoeShape load_hf_config(const std::filesystem::path& path);

enum class DispatchDtype : std::uint8_t { kBf16, kFp8 };
[[nodiscard]] std::string_view dtype_name(DispatchDtype t);  // "bf16", "fp8"
[[nodiscard]] DispatchDtype parse_dispatch_dtype(std::string_view s);

[[nodiscard]] std::uint64_t dispatch_token_bytes(std::uint32_t hidden, DispatchDtype t);
[[nodiscard]] std::uint64_t combine_token_bytes(std::uint32_t hidden);

// Experts placed in contiguous blocks: rank r holds [first(r), first(r) + count(r)); the first
// experts % ranks ranks hold one more. Needs 1 <= ranks <= experts.
class Placement {
 public:
  Placement(std::uint32_t experts, std::uint32_t ranks);
  [[nodiscard]] std::uint32_t ranks() const { return ranks_; }
  [[nodiscard]] std::uint32_t experts() const { return experts_; }
  [[nodiscard]] std::uint32_t owner(std::uint32_t expert) const;
  [[nodiscard]] std::uint32_t first(std::uint32_t rank) const;
  [[nodiscard]] std::uint32_t count(std::uint32_t rank) const;
  [[nodiscard]] std::uint32_t max_count() const { return experts_ / ranks_ + (experts_ % ranks_ != 0 ? 1 : 0); }

 private:
  std::uint32_t experts_, ranks_, base_, extra_;
};

}  // namespace fabench::ep
