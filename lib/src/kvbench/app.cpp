#include "fabench/kvbench/app.hpp"

#include <fstream>
#include <iostream>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "fabench/harness/report.hpp"
#include "fabench/kv/error.hpp"
#include "fabench/kv/plan_report.hpp"
#include "fabench/kvbench/roles.hpp"
#include "fabench/world/launch.hpp"

namespace fabench::kvbench {

namespace {

using harness::UsageError;

void add_context(const std::vector<KvBench>& benches) {
  const kv::KvSpec& s = benches.front().spec;
  const auto sz = kv::sizes(s);
  auto add = [](const std::string& k, const std::string& v) { benchmark::AddCustomContext(k, v); };
  add("kv_model", s.model.name);
  add("kv_dtype", std::string(kv::dtype_name(s.model.dtype)));
  add("kv_layers", std::to_string(s.model.layers));
  add("kv_heads", s.model.mla ? "MLA" : std::to_string(s.model.kv_heads));
  add("kv_head_dim", std::to_string(s.model.head_elems()));
  add("kv_bytes_per_token", std::to_string(sz.bytes_per_token));
  add("kv_page_tokens", std::to_string(s.page_tokens));
  add("kv_page_bytes_prefill", std::to_string(sz.prefill_page_bytes));
  add("kv_page_bytes_decode", std::to_string(sz.decode_page_bytes));
  add("kv_tp", fmt::format("prefill {} -> decode {}", s.prefill_tp, s.decode_tp));
  add("bandwidth_unit", "GBps = 1e9 bytes/s; p50/p99/max_us: per-request transfer time");
}

}  // namespace

world::AppJob::Text KvJob::text() const {
  return {"fabench-kv", "fabench-kv: KV-cache transfers between prefill and decode ranks, shaped by real models",
          "Ranks 0..P-1 are the prefill TP ranks, P..P+D-1 the decode ones: launch P + D ranks with\n"
          "mpirun -np N, srun -n N or fabench-launch -n N (rank and size from the launcher's environment).\n"
          "-d takes a list (rxe0,rxe1): rank r uses entry r mod its length.\n"
          "--plan needs no RDMA: it prints the shape, the WRs per layout and the predicted time.\n"
          "-b/-e are nccl-tests' min/max bytes (not perftest's bidirectional/events).\n"
          "Presets: " +
              kv_preset_list()};
}

std::optional<int> KvJob::before_launch(CLI::App& /*app*/) {
  if (c_.plan) {
    const std::string plans = render_plans(c_);
    const std::string path = plan_path(c_);
    if (path.empty()) {
      std::cout << plans;
    } else {
      std::ofstream out(path);
      out << plans;
      if (!out.flush()) throw UsageError(fmt::format("--json {}: cannot write the file", path));
    }
    return 0;
  }
  benches_ = build_benches(c_);
  return std::nullopt;
}

void KvJob::check_size(const ctrl::Bootstrap& boot) const {
  const kv::KvSpec& shape = benches_.front().spec;
  if (boot.size() != shape.prefill_tp + shape.decode_tp) {
    throw UsageError(
        world::rank_count_mismatch(fmt::format("prefill TP {} and decode TP {}", shape.prefill_tp, shape.decode_tp),
                                   shape.prefill_tp + shape.decode_tp, boot.size()));
  }
}

std::vector<std::string> KvJob::names() const {
  return world::names_of(benches_);
}

std::unique_ptr<world::Job> KvJob::set_up(const world::Rank& rank) {
  auto so = rank.session_options<SessionOptions>();
  so.qps = c_.qps;
  auto session = std::make_unique<Session>(rank.boot, *rank.ctx, benches_, so);
  session_ = session.get();
  const std::uint32_t r = rank.boot.rank();
  const std::uint32_t prefill_tp = benches_.front().spec.prefill_tp;
  world::log_world_up(
      rank, fmt::format(" ({} rank {})", r < prefill_tp ? "prefill" : "decode", r < prefill_tp ? r : r - prefill_tp),
      rank.where(),
      fmt::format("{} peers x {} QPs, {} MiB pool", session_->world().peers().size(), c_.qps,
                  session_->world().arena().length() >> 20),
      fmt::format("{} benchmark(s)", benches_.size()));
  return session;
}

void KvJob::begin(const world::Rank& rank) {
  harness::add_fabric_context(*rank.ctx, "kv");
  world::add_world_context(rank.boot, rank.spin_before_yield, rank.qp_timeout);
  add_context(benches_);
  link_bytes_per_s_ = c_.link.empty() ? rank.ctx->port().rate_gbps * 1e9 / 8 : kv::parse_link_rate(c_.link);
  wr_cost_s_ = c_.wr_cost_ns * 1e-9;
  if (c_.prefill_tps > 0) prefill_tokens_per_s_ = c_.prefill_tps;
  if (c_.ttft_ms > 0) ttft_s_ = c_.ttft_ms / 1e3;
}

int kv_main(int argc, char** argv) {
  KvJob job;
  return world::job_main(argc, argv, job);
}

}  // namespace fabench::kvbench
