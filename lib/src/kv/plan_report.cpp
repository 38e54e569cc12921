#include "fabench/kv/plan_report.hpp"

#include <array>
#include <vector>

#include <fmt/format.h>

#include "fabench/kv/plan.hpp"

namespace fabench::kv {

namespace {

struct Row {
  Layout layout;
  bool merge;
  PlanStats stats;
  double seconds;
};

// Contiguous is the ceiling (one run per request on both sides), so only merged.
std::vector<Row> rows(const KvSpec& s, double link_bytes_per_s, double per_wr_seconds) {
  constexpr std::array<std::pair<Layout, bool>, 5> kVariants{{{Layout::kContiguous, true},
                                                              {Layout::kLayerMajor, true},
                                                              {Layout::kLayerMajor, false},
                                                              {Layout::kBlockMajor, true},
                                                              {Layout::kBlockMajor, false}}};
  std::vector<Row> out;
  for (const auto& [layout, merge] : kVariants) {
    KvSpec v = s;
    v.layout = layout;
    v.merge = merge;
    const PlanStats st = plan_stats(v);
    out.push_back({layout, merge, st, predict_seconds(st, link_bytes_per_s, per_wr_seconds)});
  }
  return out;
}

double per_request(std::uint64_t n, std::uint32_t batch) { return static_cast<double>(n) / batch; }
double bytes_per_wr(const PlanStats& st) { return st.wrs == 0 ? 0.0 : static_cast<double>(st.bytes) / st.wrs; }
double gbytes_per_s(const Row& r) {
  return r.seconds > 0.0 ? static_cast<double>(r.stats.bytes) / r.seconds / 1e9 : 0.0;
}

std::string attention(const ModelShape& m) {
  if (m.mla)
    return fmt::format("MLA latent {} + {} (kv_lora_rank + qk_rope_head_dim)", m.kv_lora_rank, m.qk_rope_head_dim);
  return fmt::format("{} KV heads x head_dim {}", m.kv_heads, m.head_dim);
}

// Whole numbers print as such, fractions (a fragmented batch's mean) with one decimal.
std::string count(double v) {
  return v == static_cast<double>(static_cast<std::uint64_t>(v)) ? fmt::format("{}", static_cast<std::uint64_t>(v))
                                                                 : fmt::format("{:.1f}", v);
}

std::string shape_lines(const KvSpec& s, const Sizes& z, double link_bytes_per_s, double per_wr_seconds) {
  std::string out;
  const auto line = [&](std::string_view key, const std::string& value) {
    out += fmt::format("{:<26}{}\n", key, value);
  };
  line("model", fmt::format("{} ({}, {} layers, {})", s.model.name, dtype_name(s.model.dtype), s.model.layers,
                            attention(s.model)));
  line("requests", fmt::format("batch {} x ISL {} tokens, {} pages of {} tokens each", s.batch, s.isl,
                               z.pages_per_request, s.page_tokens));
  line("transfer", fmt::format("prefill TP {} -> decode TP {}, {}, fragmentation {}, max SGE {}", s.prefill_tp,
                               s.decode_tp, direction_name(s.direction), s.fragmentation, s.max_sge));
  line("bytes/token", fmt::format("{} model, {} per prefill rank, {} per decode rank", z.bytes_per_token,
                                  z.prefill_rank_bytes_per_token, z.decode_rank_bytes_per_token));
  line("bytes/page", fmt::format("{} prefill, {} decode", z.prefill_page_bytes, z.decode_page_bytes));
  line("bytes/layer/request", fmt::format("{}", z.layer_bytes_per_request));
  line("bytes/request", fmt::format("{} model, {} moved to decode ranks", z.request_bytes, z.moved_bytes_per_request));
  line("pool bytes/rank", fmt::format("{} prefill, {} decode", z.prefill_pool_bytes, z.decode_pool_bytes));
  line("link", fmt::format("{} GB/s per rank, {} us per WR (G = 1e9)", link_bytes_per_s / 1e9, per_wr_seconds * 1e6));
  return out;
}

}  // namespace

std::string plan_table(const KvSpec& s, double link_bytes_per_s, double per_wr_seconds) {
  const Sizes z = sizes(s);
  std::string out = shape_lines(s, z, link_bytes_per_s, per_wr_seconds);
  out += fmt::format("\n{:<12}{:<7}{:>14}{:>19}{:>14}{:>16}{:>11}\n", "layout", "merge", "WRs/request",
                     "WRs/request/pair", "bytes/WR", "batch time(us)", "GB/s");
  for (const Row& r : rows(s, link_bytes_per_s, per_wr_seconds)) {
    out += fmt::format("{:<12}{:<7}{:>14}{:>19}{:>14.0f}{:>16.1f}{:>11.2f}\n", layout_name(r.layout),
                       r.merge ? "yes" : "no", count(per_request(r.stats.wrs, s.batch)),
                       count(per_request(r.stats.max_pair_wrs, s.batch)), bytes_per_wr(r.stats), r.seconds * 1e6,
                       gbytes_per_s(r));
  }
  out +=
      "WRs/request/pair: the busiest pair. time: max over ranks of (bytes / link, WRs posted x per-WR cost).\n"
      "GB/s: the batch's bytes, all ranks together, over that time.\n";
  return out;
}

nlohmann::json plan_json(const KvSpec& s, double link_bytes_per_s, double per_wr_seconds) {
  const Sizes z = sizes(s);
  const ModelShape& m = s.model;
  nlohmann::json j;
  j["model"] = {{"name", m.name},
                {"dtype", dtype_name(m.dtype)},
                {"layers", m.layers},
                {"kv_heads", m.kv_heads},
                {"head_dim", m.head_dim},
                {"mla", m.mla},
                {"kv_lora_rank", m.kv_lora_rank},
                {"qk_rope_head_dim", m.qk_rope_head_dim}};
  j["spec"] = {{"page_tokens", s.page_tokens},
               {"isl_tokens", s.isl},
               {"batch", s.batch},
               {"prefill_tp", s.prefill_tp},
               {"decode_tp", s.decode_tp},
               {"direction", direction_name(s.direction)},
               {"fragmentation", s.fragmentation},
               {"max_sge", s.max_sge},
               {"max_wr_bytes", s.max_wr_bytes},
               {"seed", s.seed}};
  j["sizes"] = {{"bytes_per_token", z.bytes_per_token},
                {"prefill_rank_bytes_per_token", z.prefill_rank_bytes_per_token},
                {"decode_rank_bytes_per_token", z.decode_rank_bytes_per_token},
                {"prefill_page_bytes", z.prefill_page_bytes},
                {"decode_page_bytes", z.decode_page_bytes},
                {"pages_per_request", z.pages_per_request},
                {"layer_bytes_per_request", z.layer_bytes_per_request},
                {"request_bytes", z.request_bytes},
                {"moved_bytes_per_request", z.moved_bytes_per_request},
                {"prefill_pool_bytes", z.prefill_pool_bytes},
                {"decode_pool_bytes", z.decode_pool_bytes}};
  j["link_bytes_per_s"] = link_bytes_per_s;
  j["per_wr_seconds"] = per_wr_seconds;
  j["plans"] = nlohmann::json::array();
  for (const Row& r : rows(s, link_bytes_per_s, per_wr_seconds)) {
    j["plans"].push_back({{"layout", layout_name(r.layout)},
                          {"merge", r.merge},
                          {"pairs", r.stats.pairs},
                          {"wrs", r.stats.wrs},
                          {"segments", r.stats.segments},
                          {"bytes", r.stats.bytes},
                          {"wrs_per_request", per_request(r.stats.wrs, s.batch)},
                          {"max_pair_wrs_per_request", per_request(r.stats.max_pair_wrs, s.batch)},
                          {"max_poster_wrs", r.stats.max_poster_wrs},
                          {"max_rank_bytes", r.stats.max_rank_bytes},
                          {"bytes_per_wr_mean", bytes_per_wr(r.stats)},
                          {"predicted_seconds", r.seconds},
                          {"predicted_gbytes_per_s", gbytes_per_s(r)}});
  }
  return j;
}

}  // namespace fabench::kv
