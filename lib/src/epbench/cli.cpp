#include "fabench/epbench/cli.hpp"

#include <limits>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fabench/ep/model.hpp"
#include "fabench/kv/error.hpp"
#include "fabench/kv/plan.hpp"

namespace fabench::epbench {

using harness::UsageError;

void add_options(CLI::App& app, Cli& c) {
  harness::add_device_flags(app, c.dev);
  world::add_rank_flags(app, c.ranks);
  app.add_option("--model", c.models, "MoE presets, a list (default deepseek-v3; see below)")
      ->type_name("LIST")
      ->each([&c](const std::string&) { c.model_given = true; });
  app.add_option("--model-config", c.model_config, "A Hugging Face config.json instead of --model")->type_name("FILE");
  app.add_option("--mode", c.modes, "normal (prefill-like), low-latency (decode-like), a list (default normal)")
      ->type_name("LIST");
  app.add_option("--tokens", c.tokens, "Tokens per rank and call, a list (default 4096 normal, 128 low-latency)")
      ->type_name("LIST");
  app.add_option("--dtype", c.dtypes, "Dispatch type: bf16, fp8 (hidden + hidden/128 x 4 bytes), a list (default bf16)")
      ->type_name("LIST");
  app.add_option("--skew", c.skew, "Routing skew: none, hot-expert:R, hot-rank:R, zipf:S (default none)")
      ->type_name("SPEC");
  app.add_option("--routing", c.routing, "Replay expert choices: one line per token, top-k ids")->type_name("FILE");
  app.add_option("--seed", c.seed, "Seed of the routing (default 1)");
  app.add_option("--ranks-per-node", c.ranks_per_node, "Ranks per node for --plan's forwarding counts (default 1)")
      ->check(harness::whole_number("--ranks-per-node", 1, 1024));
  app.add_flag("--plan", c.plan, "Print bytes, copies, WRs and predicted times per rank; no RDMA");
  app.add_flag("--plan-copies", c.plan_copies, "With --plan: also the copies every rank sends every destination");
  app.add_flag("--reference", c.reference,
               "After each benchmark its floor, '.../ref-write': dispatch as one plain write of the same bytes and "
               "one zero-byte write-with-immediate per destination");
  app.add_option("--ep", c.plan_ranks, "With --plan: EP sizes (ranks), a list (default 8,16,32,64)")
      ->type_name("LIST")
      ->each([&c](const std::string&) { c.plan_ranks_given = true; });
  app.add_option("--link", c.link, "Link rate for predictions, e.g. 400G, bit/s (default: the port's; --plan 400G)")
      ->type_name("RATE");
  app.add_option("--wr-cost-ns", c.wr_cost_ns, "Posting cost per WR for predictions, ns (default 50)")
      ->check(harness::number_at_least("--wr-cost-ns", 0));
  app.add_option("--round-us", c.round_us, "One protocol round's latency for predictions, us (default 3)")
      ->check(harness::number_at_least("--round-us", 0));
  app.add_option("-n,--iters", c.iters, "Calls per benchmark run (default: Google Benchmark's adaptive count)")
      ->check(harness::whole_number("-n", 1, std::numeric_limits<std::int64_t>::max()));
  app.add_option("-D,--duration", c.duration_s, "Seconds to run each benchmark, at least (default: adaptive)")
      ->check(harness::positive_seconds("-D"));
}

std::string ep_preset_list() { return fmt::format("{}", fmt::join(ep::preset_names(), ", ")); }

namespace {

std::vector<ep::MoeShape> models(const Cli& c) {
  if (!c.model_config.empty() && c.model_given) {
    throw UsageError("--model and --model-config contradict each other: a preset or a file");
  }
  try {
    if (!c.model_config.empty()) return {ep::load_hf_config(c.model_config)};
  } catch (const kv::KvError& e) {
    throw UsageError(e.what());
  }
  return harness::parse_list<ep::MoeShape>(c.models, "--model", [](const std::string& s) { return ep::preset(s); });
}

}  // namespace

std::vector<EpBench> build_benches(const Cli& c) {
  if (c.plan && (c.iters > 0 || c.duration_s > 0))
    throw UsageError(fmt::format("{} does not apply to --plan", c.iters > 0 ? "-n" : "-D"));
  if (!c.plan && c.plan_copies) throw UsageError("--plan-copies goes with --plan");
  if (c.plan && c.reference) throw UsageError("--reference does not apply to --plan");
  if (!c.plan && c.plan_ranks_given)
    throw UsageError("--ep goes with --plan (a run's EP size is the number of ranks launched)");
  if (!c.plan && c.ranks_per_node != 1) {
    throw UsageError("--ranks-per-node above 1 goes with --plan: runs move data with one rank per node");
  }
  if (c.iters > 0 && c.duration_s > 0) throw UsageError("-n and -D contradict each other: fixed count or duration");
  ep::Skew skew;
  try {
    skew = ep::parse_skew(c.skew);
  } catch (const kv::KvError& e) {
    throw UsageError(e.what());
  }
  if (!c.routing.empty() && skew.kind != ep::SkewKind::kNone) {
    throw UsageError("--routing and --skew contradict each other: a recorded routing or a drawn one");
  }
  const auto modes = harness::parse_list<ep::Mode>(c.modes, "--mode",
                                                   [](const std::string& s) { return ep::parse_mode(s); });
  const auto dtypes = harness::parse_list<ep::DispatchDtype>(
      c.dtypes, "--dtype", [](const std::string& s) { return ep::parse_dispatch_dtype(s); });
  std::vector<EpBench> out;
  for (const auto& m : models(c)) {
    for (const auto mode : modes) {
      const std::string tokens = !c.tokens.empty() ? c.tokens : mode == ep::Mode::kNormal ? "4096" : "128";
      for (const auto dt : dtypes) {
        for (const auto& t : harness::split_list(tokens)) {
          EpBench b;
          b.config = ep::EpConfig{m,    0, c.ranks_per_node, harness::parse_count(t, "--tokens", 1, ep::kMaxTokens),
                                  mode, dt};
          b.skew = skew;
          b.routing_file = c.routing;
          b.seed = c.seed;
          out.push_back(b);
          if (c.reference) {
            b.reference = true;
            out.push_back(std::move(b));
          }
        }
      }
    }
  }
  return out;
}

std::string render_plan(const Cli& c) {
  auto benches = build_benches(c);
  double link = 0;  // bytes per second
  try {
    link = kv::parse_link_rate(c.link.empty() ? "400G" : c.link);
  } catch (const kv::KvError& e) {
    throw UsageError(fmt::format("--link: {}", e.what()));
  }
  const auto sizes = harness::parse_list<std::uint32_t>(
      c.plan_ranks, "--ep", [](const std::string& s) { return harness::parse_count(s, "--ep", 1, 1024); });
  std::string out = fmt::format("{:<44} {:>5} {:>9} {:>9} {:>12} {:>12} {:>9} {:>9} {:>11} {:>11}\n", "benchmark", "ep",
                                "recv_max", "recv_mean", "fabric_B/rk", "intra_B/rk", "wrs_disp", "wrs_comb",
                                "dispatch_us", "combine_us");
  std::string copies;
  for (auto& b : benches) {
    for (const std::uint32_t n : sizes) {
      b.config.ranks = n;
      try {
        const ep::EpPlan p = ep::make_plan(b.config, b.router());
        std::uint64_t fabric = 0, intra = 0, wd = 0, wc = 0;
        for (const auto& r : p.ranks) {
          fabric = std::max(fabric, r.dispatch_sent.fabric + r.header_bytes);
          intra = std::max(intra, r.dispatch_sent.intra);
          wd = std::max(wd, r.dispatch_wrs);
          wc = std::max(wc, r.combine_wrs);
        }
        const auto pr = ep::predict(p, link, c.wr_cost_ns * 1e-9, c.round_us * 1e-6);
        out += fmt::format("{:<44} {:>5} {:>9} {:>9.1f} {:>12} {:>12} {:>9} {:>9} {:>11.1f} {:>11.1f}\n", b.name(), n,
                           p.recv_copies_max(), p.recv_copies_mean(), fabric, intra, wd, wc, pr.dispatch_s * 1e6,
                           pr.combine_s * 1e6);
        if (c.plan_copies) copies += copies_matrix(p, b.name());
      } catch (const kv::KvError& e) {
        throw UsageError(e.what());
      }
    }
  }
  out += fmt::format(
      "(per rank, the busiest: recv copies = token copies its experts get; fabric_B = dispatch bytes it sends across "
      "nodes, headers included; link {} bit/s, {} ns per WR, {} us per round; ranks per node {})\n",
      c.link.empty() ? "400G" : c.link, c.wr_cost_ns, c.round_us, c.ranks_per_node);
  return out + copies;
}

}  // namespace fabench::epbench
