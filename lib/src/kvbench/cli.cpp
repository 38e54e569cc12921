#include "fabench/kvbench/cli.hpp"

#include <limits>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "fabench/kv/error.hpp"
#include "fabench/kv/plan_report.hpp"

namespace fabench::kvbench {

using harness::UsageError;

void add_options(CLI::App& app, Cli& c) {
  harness::add_device_flags(app, c.dev);
  world::add_rank_flags(app, c.ranks);
  app.add_option("--model", c.models, "Model presets, a list (default llama-3.1-8b; see below)")
      ->each([&c](const std::string& /*value*/) { c.model_given = true; });
  app.add_option("--model-config", c.model_config, "A Hugging Face config.json instead of --model");
  app.add_option("--dtype", c.dtype, "Cache element type: bf16, fp16, fp8, fp32 (default: the model's)");
  app.add_option("--page-tokens", c.page_tokens, "Tokens per page (default 16; 64 for MLA models)")
      ->check(harness::whole_number("--page-tokens", 1, 1 << 20));
  app.add_option("--isl", c.isl, "Prompt tokens per request, a list (default 4096)");
  app.add_option("--batch", c.batch, "Concurrent requests per transfer (default 1)")
      ->check(harness::whole_number("--batch", 1, 4096));
  app.add_option("--prefill-tp", c.prefill_tp, "Prefill TP: ranks 0..P-1 (default 1)")
      ->check(harness::whole_number("--prefill-tp", 1, 1024));
  app.add_option("--decode-tp", c.decode_tp, "Decode TP: ranks P..P+D-1 (default 1)")
      ->check(harness::whole_number("--decode-tp", 1, 1024));
  app.add_option("--layout", c.layouts, "contiguous, layer (vLLM), block (TensorRT-LLM), a list (default layer)");
  app.add_option("--frag", c.frags, "Fraction of pages at random block ids, 0..1, a list (default 0)");
  app.add_option("--merge", c.merge, "Merge runs contiguous on both sides: on, off, a list (default on)");
  app.add_option("--max-sge", c.max_sge, "Local segments per WR (default 1)")
      ->check(harness::whole_number("--max-sge", 1, 1024));
  app.add_option("--max-wr-bytes", c.max_wr_bytes,
                 "Largest WR a merge may build, and the contiguous layout's WR size (default 1G)");
  app.add_option("--direction", c.directions, "push (prefill writes), pull (decode reads), a list (default push)");
  app.add_option("--qps", c.qps, "QPs per prefill/decode pair; WRs dealt round-robin (default 1)")
      ->check(harness::whole_number("--qps", 1, 64));
  app.add_option("--signal", c.signal, "Signal every N-th WR per QP (default 16; a list with --wr-sweep)");
  app.add_option("--post-list", c.post_list, "WRs per ibv_post_send (default 1; a list with --wr-sweep)");
  app.add_option("--seed", c.seed, "Seed of the page tables (default 1)");
  app.add_flag("--plan", c.plan, "Print the shape, WRs per layout and predicted times; no RDMA");
  app.add_flag("--json", c.json, "With --plan: JSON instead of the table");
  app.add_option("--link", c.link, "Link rate for predictions, e.g. 400G (default: the port's; 400G for --plan)");
  app.add_option("--wr-cost-ns", c.wr_cost_ns, "Posting cost per WR for predictions, ns (default 50)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--prefill-tps", c.prefill_tps, "Prefill speed, tokens/s: ttft_share = transfer p50 / (isl / tps)")
      ->check(CLI::PositiveNumber);
  app.add_option("--ttft-ms", c.ttft_ms, "Prefill time per request, ms: ttft_share = transfer p50 / this")
      ->check(CLI::PositiveNumber);
  app.add_flag("--wr-sweep", c.wr_sweep,
               "Per-WR cost curve: the request's bytes, contiguous, in WRs of -b..-e bytes; prints the knee");
  app.add_option("-b,--minbytes", c.min_bytes, "--wr-sweep: smallest bytes per WR (default 64)");
  app.add_option("-e,--maxbytes", c.max_bytes, "--wr-sweep: largest bytes per WR (default 1M)");
  app.add_option("-f,--stepfactor", c.factor, "--wr-sweep: multiply the size by this (default 4)")
      ->check(harness::whole_number("-f", 2, 1024));
  app.add_option("--sge", c.sges, "--wr-sweep: SGEs per WR, a list (default 1)");
  app.add_option("-n,--iters", c.iters, "Transfers per benchmark run (default: Google Benchmark's adaptive count)")
      ->check(harness::whole_number("-n", 1, std::numeric_limits<std::int64_t>::max()));
  app.add_option("-D,--duration", c.duration_s, "Run each benchmark for at least this many seconds")
      ->check(harness::positive_seconds("-D"));
}

std::string kv_preset_list() { return fmt::format("{}", fmt::join(kv::preset_names(), ", ")); }

namespace {

template <typename T, typename Parse>
std::vector<T> parse_list(const std::string& text, const char* flag, Parse parse) {
  std::vector<T> out;
  for (const auto& item : harness::split_list(text)) {
    try {
      out.push_back(parse(item));
    } catch (const kv::KvError& e) {
      throw UsageError(fmt::format("{} {}: {}", flag, text, e.what()));
    }
  }
  return out;
}

std::uint32_t parse_count(const std::string& item, const char* flag, std::uint32_t lo, std::uint32_t hi) {
  const auto v = harness::parse_integer<std::uint32_t>(item);
  if (!v || *v < lo || *v > hi) throw UsageError(fmt::format("{} must be from {} to {} (got {})", flag, lo, hi, item));
  return *v;
}

double parse_fraction(const std::string& item) {
  std::size_t used = 0;
  double v = -1;
  try {
    v = std::stod(item, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != item.size() || item.empty() || !(v >= 0 && v <= 1)) {
    throw UsageError(fmt::format("--frag must be from 0 to 1 (got {})", item));
  }
  return v;
}

bool parse_on_off(const std::string& item) {
  if (item == "on" || item == "yes" || item == "1") return true;
  if (item == "off" || item == "no" || item == "0") return false;
  throw UsageError(fmt::format("--merge takes on or off (got {})", item));
}

std::vector<kv::ModelShape> models(const Cli& c) {
  std::vector<kv::ModelShape> out;
  if (!c.model_config.empty() && c.model_given) {
    throw UsageError("--model and --model-config contradict each other: a preset or a file");
  }
  if (!c.model_config.empty()) {
    out.push_back(kv::load_hf_config(c.model_config));
  } else {
    out = parse_list<kv::ModelShape>(c.models, "--model", [](const std::string& s) { return kv::preset(s); });
  }
  if (!c.dtype.empty()) {
    const auto dt = parse_list<kv::Dtype>(c.dtype, "--dtype", [](const std::string& s) { return kv::parse_dtype(s); });
    for (auto& m : out) m.dtype = dt.front();
  }
  return out;
}

// The spec of one model and ISL before layout, direction and merge are chosen.
kv::KvSpec base_spec(const Cli& c, const kv::ModelShape& m, std::uint32_t isl) {
  kv::KvSpec s;
  s.model = m;
  s.page_tokens = c.page_tokens != 0 ? c.page_tokens : (m.mla ? 64 : 16);
  s.isl = isl;
  s.batch = c.batch;
  s.prefill_tp = c.prefill_tp;
  s.decode_tp = c.decode_tp;
  s.max_sge = c.max_sge;
  s.seed = c.seed;
  try {
    s.max_wr_bytes = harness::parse_bytes(c.max_wr_bytes);
  } catch (const std::invalid_argument& e) {
    throw UsageError(fmt::format("--max-wr-bytes: {}", e.what()));
  }
  if (s.max_wr_bytes == 0 || s.max_wr_bytes > (std::uint64_t{1} << 31)) {
    throw UsageError(fmt::format("--max-wr-bytes must be from 1 to 2G (got {})", c.max_wr_bytes));
  }
  return s;
}

std::vector<std::uint32_t> isls(const Cli& c) {
  std::vector<std::uint32_t> out;
  for (const auto& item : harness::split_list(c.isl)) out.push_back(parse_count(item, "--isl", 1, 1U << 24));
  return out;
}

std::vector<std::uint32_t> counts(const std::string& text, const char* flag, std::uint32_t hi) {
  std::vector<std::uint32_t> out;
  for (const auto& item : harness::split_list(text)) out.push_back(parse_count(item, flag, 1, hi));
  return out;
}

std::vector<std::uint64_t> sweep_sizes(const Cli& c) {
  return harness::size_range(c.min_bytes, c.max_bytes, c.factor);
}

}  // namespace

std::vector<KvBench> build_benches(const Cli& c) {
  if (c.iters > 0 && c.duration_s > 0) throw UsageError("-n and -D contradict each other: fixed count or duration");
  if (c.prefill_tps > 0 && c.ttft_ms > 0) {
    throw UsageError("--prefill-tps and --ttft-ms contradict each other: one prefill time");
  }
  const auto layouts = parse_list<kv::Layout>(c.layouts, "--layout", [](const std::string& s) { return kv::parse_layout(s); });
  const auto dirs = parse_list<kv::Direction>(c.directions, "--direction",
                                              [](const std::string& s) { return kv::parse_direction(s); });
  std::vector<double> frags;
  for (const auto& item : harness::split_list(c.frags)) frags.push_back(parse_fraction(item));
  std::vector<bool> merges;
  for (const auto& item : harness::split_list(c.merge)) merges.push_back(parse_on_off(item));
  const auto signals = counts(c.signal, "--signal", 4096);
  const auto lists = counts(c.post_list, "--post-list", 1024);
  TransferOptions first_opts{signals.front(), lists.front()};
  const auto shapes = models(c);
  const auto prompt_lengths = isls(c);
  if (c.wr_sweep && (shapes.size() > 1 || prompt_lengths.size() > 1)) {
    throw UsageError("--wr-sweep takes one model and one ISL: its benchmark names and knee lines name neither");
  }
  std::vector<KvBench> out;
  for (const auto& m : shapes) {
    for (const auto isl : prompt_lengths) {
      for (const auto dir : dirs) {
        kv::KvSpec s = base_spec(c, m, isl);
        s.direction = dir;
        if (c.wr_sweep) {
          s.layout = kv::Layout::kContiguous;
          s.max_sge = 1;
          for (const auto g : counts(c.sges, "--sge", 1024))
            for (const auto l : lists)
              for (const auto sig : signals)
                for (const auto b : sweep_sizes(c)) out.push_back(KvBench{s, BenchKind::kSweep, {sig, l}, b, g, false});
          continue;
        }
        kv::KvSpec ceiling = s;
        ceiling.layout = kv::Layout::kContiguous;
        ceiling.max_sge = 1;
        const bool asked = std::find(layouts.begin(), layouts.end(), kv::Layout::kContiguous) != layouts.end();
        out.push_back(KvBench{ceiling, BenchKind::kTransfer, first_opts, 0, 1, !asked});
        for (const auto layout : layouts) {
          if (layout == kv::Layout::kContiguous) continue;
          for (const auto f : frags) {
            for (const bool merge : merges) {
              kv::KvSpec t = s;
              t.layout = layout;
              t.fragmentation = f;
              t.merge = merge;
              out.push_back(KvBench{t, BenchKind::kTransfer, first_opts, 0, 1, false});
            }
          }
        }
      }
    }
  }
  for (const auto& b : out) {
    try {
      kv::validate(b.spec);
    } catch (const kv::KvError& e) {
      throw UsageError(e.what());
    }
  }
  return out;
}

std::string render_plans(const Cli& c) {
  const double link = kv::parse_link_rate(c.link.empty() ? "400G" : c.link);
  const double wr_cost = c.wr_cost_ns * 1e-9;
  const auto layouts = parse_list<kv::Layout>(c.layouts, "--layout", [](const std::string& s) { return kv::parse_layout(s); });
  const auto dirs = parse_list<kv::Direction>(c.directions, "--direction",
                                              [](const std::string& s) { return kv::parse_direction(s); });
  nlohmann::json all = nlohmann::json::array();
  std::string text;
  for (const auto& m : models(c)) {
    for (const auto isl : isls(c)) {
      for (const auto dir : dirs) {
        kv::KvSpec s = base_spec(c, m, isl);
        s.direction = dir;
        s.layout = layouts.front();
        s.fragmentation = parse_fraction(harness::split_list(c.frags).front());
        kv::validate(s);
        if (c.json) {
          all.push_back(kv::plan_json(s, link, wr_cost));
        } else {
          text += kv::plan_table(s, link, wr_cost) + "\n";
        }
      }
    }
  }
  return c.json ? all.dump(2) + "\n" : text;
}

}  // namespace fabench::kvbench
