// PairJob (job.hpp): fabench-accept's rounds as runs of the session protocol.
#include "fabench/acceptbench/job.hpp"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "fabench/accept/result_json.hpp"

namespace fabench::acceptbench {

namespace {

std::chrono::milliseconds seconds_to_ms(double s) {
  return std::chrono::milliseconds(static_cast<std::int64_t>(s * 1e3));
}

}  // namespace

PairJob::PairJob(ctrl::Bootstrap& boot, const harness::Context& ctx, const RunSettings& settings)
    : boot_(boot), ctx_(ctx), s_(settings), partner_(boot.size(), -1), side_(boot.size(), 0) {}

world::Params PairJob::round_params(const std::vector<accept::Pair>& pairs) {
  std::string text;
  for (const auto& p : pairs) text += fmt::format("{}{}-{}", text.empty() ? "" : ",", p.a, p.b);
  return {{"pairs", text}};
}

world::DriverOptions PairJob::driver_options(const RunSettings& settings) {
  world::DriverOptions o;
  o.prog = "fabench-accept";
  o.timeout = seconds_to_ms(settings.setup_s);
  o.spin_before_yield = settings.plan.spin_before_yield;
  o.keep_going = true;
  o.run_limit = seconds_to_ms(settings.pair_timeout_s);
  return o;
}

void PairJob::prepare(std::size_t /*round*/, const world::Params& params) {
  link_.reset();
  failure_.clear();
  std::fill(partner_.begin(), partner_.end(), -1);
  for (const auto& [k, v] : params) {
    if (k != "pairs") continue;
    std::size_t at = 0;
    while (at < v.size()) {
      std::size_t end = v.find(',', at);
      if (end == std::string::npos) end = v.size();
      const std::string one = v.substr(at, end - at);
      const std::size_t dash = one.find('-');
      const auto a = std::stoul(one.substr(0, dash));
      const auto b = std::stoul(one.substr(dash + 1));
      at = end + 1;
      if (a >= partner_.size() || b >= partner_.size()) continue;  // rank 0 schedules only ranks of the world
      partner_[a] = static_cast<int>(b);
      partner_[b] = static_cast<int>(a);
      side_[a] = 0;
      side_[b] = 1;
    }
  }
  if (partner_[boot_.rank()] < 0) return;
  try {
    link_ = std::make_unique<PairLink>(ctx_, s_.link);
  } catch (const std::exception& e) {
    set_failure(0, fmt::format("{}: setup: {}", boot_.describe_rank(boot_.rank()), e.what()));
  }
}

std::vector<verbs::Endpoint> PairJob::endpoints() const {
  return link_ ? link_->endpoints() : std::vector<verbs::Endpoint>{};
}

void PairJob::connect(int rank, std::span<const verbs::Endpoint> remote) {
  if (!link_ || rank < 0) return;
  try {
    link_->connect(remote);
  } catch (const std::exception& e) {
    set_failure(1, fmt::format("{}: connect: {}", boot_.describe_rank(boot_.rank()), e.what()));
  }
}

world::RankReport PairJob::run(std::uint64_t /*iterations*/, const world::Watch& /*watch*/) {
  world::RankReport out;
  const std::uint32_t me = boot_.rank();
  if (partner_[me] < 0) return out;
  if (failure_.empty()) {
    try {
      PairPlan plan = s_.plan;
      plan.partner = boot_.describe_rank(static_cast<std::uint32_t>(partner_[me]));
      const Side side = side_[me] == 0 ? Side::kA : Side::kB;
      out.json =
          accept::attempt_to_json(measure_pair(*link_, side, plan, ctx_.device().name(), ctx_.port().port_num)).dump();
    } catch (const std::exception& e) {
      set_failure(2, fmt::format("{}: {}", boot_.describe_rank(me), e.what()));
    }
  }
  link_.reset();
  if (!failure_.empty()) out.json = nlohmann::json{{"failure", failure_}, {"stage", stage_}}.dump();
  return out;
}

std::string PairJob::name(std::size_t round) const { return fmt::format("round {}", round + 1); }

void PairJob::set_failure(int stage, const std::string& text) {
  link_.reset();
  if (!failure_.empty()) return;
  failure_ = text;
  stage_ = stage;
}

}  // namespace fabench::acceptbench
