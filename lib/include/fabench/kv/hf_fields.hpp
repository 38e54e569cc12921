// The reading of a Hugging Face config.json, shared by every loader of one (kv's model shapes,
// ep's MoE shapes): one-line errors naming the file and the field, "<path>: <prefix><key> <what>".
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "fabench/kv/error.hpp"

namespace fabench::kv {

// The object the fields are read from, and how to name them in errors.
struct HfFields {
  const std::string& file;
  const nlohmann::json& obj;
  std::string prefix;  // "" or "text_config."

  [[nodiscard]] const nlohmann::json* find(std::string_view key) const {
    const auto it = obj.find(std::string(key));
    if (it == obj.end() || it->is_null()) return nullptr;
    return &*it;
  }
  [[nodiscard]] bool has(std::string_view key) const { return find(key) != nullptr; }

  [[noreturn]] void fail(std::string_view key, std::string_view what) const {
    throw KvError(fmt::format("{}: {}{} {}", file, prefix, key, what));
  }

  [[nodiscard]] std::optional<std::uint32_t> positive(std::string_view key) const {
    const nlohmann::json* v = find(key);
    if (v == nullptr) return std::nullopt;
    const bool ok = v->is_number_integer() &&
                    (v->is_number_unsigned() ? v->get<std::uint64_t>() <= UINT32_MAX
                                             : v->get<std::int64_t>() > 0 && v->get<std::int64_t>() <= UINT32_MAX) &&
                    v->get<std::uint64_t>() > 0;
    if (!ok) fail(key, fmt::format("must be a positive integer (got {})", v->dump()));
    return static_cast<std::uint32_t>(v->get<std::uint64_t>());
  }

  [[nodiscard]] std::uint32_t required(std::string_view key) const {
    const auto v = positive(key);
    if (!v) fail(key, "is missing");
    return *v;
  }

  [[nodiscard]] std::optional<std::string> text(std::string_view key) const {
    const nlohmann::json* v = find(key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_string()) fail(key, fmt::format("must be a string (got {})", v->dump()));
    return v->get<std::string>();
  }
};

// A config's model name: `_name_or_path` of the top object, else `model_type` of `f` (the
// object the shape came from), else the file's stem.
[[nodiscard]] std::string hf_model_name(const HfFields& top, const HfFields& f, const std::filesystem::path& path);

// The file parsed; "cannot open", "not JSON (parse error at byte N)" or "not JSON (a number out of
// range)" otherwise.
[[nodiscard]] nlohmann::json parse_hf_file(const std::filesystem::path& path, const std::string& file);

}  // namespace fabench::kv
