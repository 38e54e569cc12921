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

namespace {

// Records that `flag` was given, for the modes that ignore it (check_mode_flags).
auto noter(Cli& c) {
  return [&c](std::string flag) {
    return [&c, flag = std::move(flag)](const std::string& /*value*/) { c.given.insert(flag); };
  };
}

// The model and the transfer's shape.
void add_shape_options(CLI::App& app, Cli& c) {
  app.add_option("--model", c.models, "Model presets, a list (default llama-3.1-8b; see below)")
      ->type_name("LIST")
      ->each([&c](const std::string& /*value*/) { c.model_given = true; });
  app.add_option("--model-config", c.model_config, "A Hugging Face config.json instead of --model")->type_name("FILE");
  app.add_option("--dtype", c.dtype, "Cache element type: bf16, fp16 (f16), fp8, fp32 (f32) (default: the model's)")
      ->type_name("TYPE");
  app.add_option("--page-tokens", c.page_tokens, "Tokens per page (default 16; 64 for MLA models)")
      ->check(harness::whole_number("--page-tokens", 1, 1 << 20));
  app.add_option("--isl", c.isl, "Prompt tokens per request, a list (default 4096)")->type_name("LIST");
  app.add_option("--batch", c.batch, "Concurrent requests per transfer (default 1)")
      ->check(harness::whole_number("--batch", 1, 4096));
  app.add_option("--prefill-tp", c.prefill_tp, "Prefill TP: ranks 0..P-1 (default 1)")
      ->check(harness::whole_number("--prefill-tp", 1, 1024));
  app.add_option("--decode-tp", c.decode_tp, "Decode TP: ranks P..P+D-1 (default 1)")
      ->check(harness::whole_number("--decode-tp", 1, 1024));
}

// How the transfer is laid out and posted.
void add_transfer_options(CLI::App& app, Cli& c) {
  const auto note = noter(c);
  app.add_option("--layout", c.layouts, "contiguous, layer (vLLM), block (TensorRT-LLM), a list (default layer)")
      ->type_name("LIST")
      ->each(note("--layout"));
  app.add_option("--frag", c.frags, "Fraction of pages at random block ids, 0..1, a list (default 0)")
      ->type_name("LIST")
      ->each(note("--frag"));
  app.add_option("--merge", c.merge, "Merge runs contiguous on both sides: on, off, a list (default on)")
      ->type_name("LIST")
      ->each(note("--merge"));
  app.add_option("--max-sge", c.max_sge, "Local segments per WR (default 1)")
      ->check(harness::whole_number("--max-sge", 1, 1024))
      ->each(note("--max-sge"));
  app.add_option("--max-wr-bytes", c.max_wr_bytes,
                 "Largest WR a merge may build, and the contiguous layout's WR size, bytes, K/M/G (default 1G)")
      ->type_name("SIZE");
  app.add_option("--direction", c.directions, "push (prefill writes), pull (decode reads), a list (default push)")
      ->type_name("LIST");
  app.add_option("-q,--qps", c.qps, "QPs per prefill/decode pair; WRs dealt round-robin (default 1)")
      ->check(harness::whole_number("-q", 1, 64))
      ->each(note("--qps"));
  app.add_option("--signal", c.signal, "Signal every N-th WR per QP (default 16; a list with --wr-sweep)")
      ->type_name("N")
      ->each(note("--signal"));
  app.add_option("--post-list", c.post_list, "WRs per ibv_post_send (default 1; a list with --wr-sweep)")
      ->type_name("N")
      ->each(note("--post-list"));
}

// --plan, the time model and the prefill time.
void add_plan_options(CLI::App& app, Cli& c) {
  const auto note = noter(c);
  app.add_option("--seed", c.seed, "Seed of the page tables (default 1)");
  app.add_flag("--plan", c.plan, "Print the shape, WRs per layout and predicted times; no RDMA");
  app.add_option("--json", c.json, "With --plan: the plan as JSON, to FILE (no FILE or -: stdout)")
      ->expected(0, 1)
      ->type_name("[FILE]");
  app.add_option("--link", c.link, "Link rate for predictions, e.g. 400G, bit/s (default: the port's; --plan 400G)")
      ->type_name("RATE");
  app.add_option("--wr-cost-ns", c.wr_cost_ns, "Posting cost per WR for predictions, ns (default 50)")
      ->check(harness::number_at_least("--wr-cost-ns", 0));
  app.add_option("--prefill-tps", c.prefill_tps, "Prefill speed, tokens/s: ttft_share = transfer p50 / (isl / tps)")
      ->check(harness::number_at_least("--prefill-tps", 0, false))
      ->each(note("--prefill-tps"));
  app.add_option("--ttft-ms", c.ttft_ms, "Prefill time per request, ms: ttft_share = transfer p50 / this")
      ->check(harness::number_at_least("--ttft-ms", 0, false))
      ->each(note("--ttft-ms"));
}

// --wr-sweep and the run's length.
void add_sweep_options(CLI::App& app, Cli& c) {
  const auto note = noter(c);
  app.add_flag("--wr-sweep", c.wr_sweep,
               "Per-WR cost curve: the request's bytes, contiguous, in WRs of -b..-e bytes; prints the knee");
  app.add_option("-b,--minbytes", c.min_bytes, "--wr-sweep: smallest bytes per WR (default 64; nccl-tests' -b)")
      ->type_name("SIZE")
      ->each(note("-b"));
  app.add_option("-e,--maxbytes", c.max_bytes, "--wr-sweep: largest bytes per WR (default 1M; nccl-tests' -e)")
      ->type_name("SIZE")
      ->each(note("-e"));
  app.add_option("-f,--stepfactor", c.factor, "--wr-sweep: multiply the size by this (default 4)")
      ->check(harness::whole_number("-f", 2, 1024))
      ->each(note("-f"));
  app.add_option("--sge", c.sges, "--wr-sweep: SGEs per WR, a list (default 1)")
      ->type_name("LIST")
      ->each(note("--sge"));
  app.add_option("-n,--iters", c.iters, "Transfers per benchmark run (default: Google Benchmark's adaptive count)")
      ->check(harness::whole_number("-n", 1, std::numeric_limits<std::int64_t>::max()))
      ->each(note("-n"));
  app.add_option("-D,--duration", c.duration_s, "Seconds to run each benchmark, at least (default: adaptive)")
      ->check(harness::positive_seconds("-D"))
      ->each(note("-D"));
}

}  // namespace

void add_options(CLI::App& app, Cli& c) {
  harness::add_device_flags(app, c.dev);
  world::add_rank_flags(app, c.ranks);
  add_shape_options(app, c);
  add_transfer_options(app, c);
  add_plan_options(app, c);
  add_sweep_options(app, c);
}

std::string kv_preset_list() { return fmt::format("{}", fmt::join(kv::preset_names(), ", ")); }

namespace {

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
    out = harness::parse_list<kv::ModelShape>(c.models, "--model", [](const std::string& s) { return kv::preset(s); });
  }
  if (!c.dtype.empty()) {
    const auto dt = harness::parse_list<kv::Dtype>(c.dtype, "--dtype",
                                                   [](const std::string& s) { return kv::parse_dtype(s); });
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
  for (const auto& item : harness::split_list(c.isl)) out.push_back(harness::parse_count(item, "--isl", 1, 1U << 24));
  return out;
}

std::vector<std::uint32_t> counts(const std::string& text, const char* flag, std::uint32_t hi) {
  std::vector<std::uint32_t> out;
  for (const auto& item : harness::split_list(text)) out.push_back(harness::parse_count(item, flag, 1, hi));
  return out;
}

std::vector<std::uint64_t> sweep_sizes(const Cli& c) { return harness::size_range(c.min_bytes, c.max_bytes, c.factor); }

// Flags the chosen mode would ignore are refused, naming the flag and the mode.
void check_mode_flags(const Cli& c) {
  const auto refuse = [&c](std::initializer_list<const char*> flags, std::string_view why) {
    for (const char* f : flags) {
      if (c.given.count(f) != 0) throw UsageError(fmt::format("{} {}", f, why));
    }
  };
  if (c.plan) {
    if (c.wr_sweep) throw UsageError("--wr-sweep is a run: --plan does not predict it; drop one of them");
    refuse({"--layout", "--merge"}, "does not apply to --plan: its table shows every layout, merged and not");
    refuse({"--qps", "--signal", "--post-list", "-n", "-D", "--prefill-tps", "--ttft-ms"},
           "does not apply to --plan: it predicts from the WRs, not a run");
  }
  if (!c.plan && c.json) {
    throw UsageError("--json goes with --plan (a run's JSON: --benchmark_out=FILE --benchmark_out_format=json)");
  }
  if (c.wr_sweep) {
    refuse({"--layout", "--merge", "--frag", "--max-sge"},
           "does not apply to --wr-sweep: the sweep moves the request contiguous, in WRs of -b..-e bytes");
  } else {
    refuse({"-b", "-e", "-f", "--sge"}, "goes with --wr-sweep");
  }
}

}  // namespace

namespace {

// The contiguous ceiling of `s` (implied when --layout does not list it), then each layout x
// fragmentation x merge.
void add_layout_benches(std::vector<KvBench>& out, const kv::KvSpec& s, const std::vector<kv::Layout>& layouts,
                        const std::vector<double>& frags, const std::vector<bool>& merges,
                        const TransferOptions& opts) {
  kv::KvSpec ceiling = s;
  ceiling.layout = kv::Layout::kContiguous;
  ceiling.max_sge = 1;
  const bool asked = std::find(layouts.begin(), layouts.end(), kv::Layout::kContiguous) != layouts.end();
  out.push_back(KvBench{ceiling, BenchKind::kTransfer, opts, 0, 1, !asked});
  for (const auto layout : layouts) {
    if (layout == kv::Layout::kContiguous) continue;
    for (const auto f : frags) {
      for (const bool merge : merges) {
        kv::KvSpec t = s;
        t.layout = layout;
        t.fragmentation = f;
        t.merge = merge;
        out.push_back(KvBench{t, BenchKind::kTransfer, opts, 0, 1, false});
      }
    }
  }
}

}  // namespace

std::vector<KvBench> build_benches(const Cli& c) {
  check_mode_flags(c);
  if (c.iters > 0 && c.duration_s > 0) throw UsageError("-n and -D contradict each other: fixed count or duration");
  if (c.prefill_tps > 0 && c.ttft_ms > 0) {
    throw UsageError("--prefill-tps and --ttft-ms contradict each other: one prefill time");
  }
  const auto layouts = harness::parse_list<kv::Layout>(c.layouts, "--layout",
                                                       [](const std::string& s) { return kv::parse_layout(s); });
  const auto dirs = harness::parse_list<kv::Direction>(c.directions, "--direction",
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
        add_layout_benches(out, s, layouts, frags, merges, first_opts);
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
  // Every value is checked as a run checks it (a plan of what a run refuses is no plan).
  static_cast<void>(build_benches(c));
  const double link = kv::parse_link_rate(c.link.empty() ? "400G" : c.link);
  const double wr_cost = c.wr_cost_ns * 1e-9;
  const auto dirs = harness::parse_list<kv::Direction>(c.directions, "--direction",
                                                       [](const std::string& s) { return kv::parse_direction(s); });
  const bool json = c.json.has_value();
  nlohmann::json all = nlohmann::json::array();
  std::string text;
  for (const auto& m : models(c)) {
    for (const auto isl : isls(c)) {
      for (const auto dir : dirs) {
        for (const auto& frag : harness::split_list(c.frags)) {
          kv::KvSpec s = base_spec(c, m, isl);
          s.direction = dir;
          s.layout = kv::Layout::kLayerMajor;  // the table shows every layout
          s.fragmentation = parse_fraction(frag);
          kv::validate(s);
          if (json) {
            all.push_back(kv::plan_json(s, link, wr_cost));
          } else {
            text += kv::plan_table(s, link, wr_cost) + "\n";
          }
        }
      }
    }
  }
  return json ? all.dump(2) + "\n" : text;
}

std::string plan_path(const Cli& c) { return c.json && *c.json != "-" ? *c.json : std::string(); }

}  // namespace fabench::kvbench
