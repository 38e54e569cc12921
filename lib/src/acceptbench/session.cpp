// The fabench-accept control protocol (session.hpp): rank 0's rounds and the followers' loop.
#include "fabench/acceptbench/session.hpp"

#include <chrono>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "fabench/accept/budget.hpp"
#include "fabench/accept/error.hpp"
#include "fabench/accept/judge.hpp"
#include "fabench/accept/report.hpp"
#include "fabench/accept/result_json.hpp"
#include "fabench/base/error.hpp"
#include "fabench/ctrl/wire.hpp"
#include "fabench/harness/loop.hpp"

namespace fabench::acceptbench {

namespace {

using accept::Attempt;
using accept::Pair;
using accept::PairResult;
using accept::Status;
using nlohmann::json;

std::string to_hex(const std::vector<std::uint8_t>& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (const auto b : bytes) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
  return out;
}

std::vector<std::uint8_t> from_hex(const std::string& text) {
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    throw RunError("endpoint bytes are not hex");
  };
  if (text.size() % 2 != 0) throw RunError("endpoint bytes are not hex");
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i < text.size(); i += 2)
    out.push_back(static_cast<std::uint8_t>(nibble(text[i]) * 16 + nibble(text[i + 1])));
  return out;
}

std::string endpoints_hex(const PairLink& link) {
  std::vector<std::uint8_t> bytes;
  for (const auto& ep : link.endpoints()) ctrl::append_endpoint(bytes, ep);
  return to_hex(bytes);
}

std::vector<verbs::Endpoint> endpoints_from_hex(const std::string& hex) {
  const auto bytes = from_hex(hex);
  if (bytes.empty() || bytes.size() % ctrl::kEndpointWireBytes != 0) throw RunError("bad endpoint list");
  std::vector<verbs::Endpoint> out;
  for (std::size_t i = 0; i < bytes.size(); i += ctrl::kEndpointWireBytes)
    out.push_back(ctrl::read_endpoint(std::span(bytes).subspan(i, ctrl::kEndpointWireBytes)));
  return out;
}

std::string param(const ctrl::Command& c, const std::string& key) {
  for (const auto& [k, v] : c.params) {
    if (k == key) return v;
  }
  throw RunError(fmt::format("command {} lacks {}", c.benchmark, key));
}

std::chrono::milliseconds millis(double s) { return std::chrono::milliseconds(static_cast<std::int64_t>(s * 1e3)); }

// ---------------------------------------------------------------------------------------------
// Rank 0.

class Leader {
 public:
  Leader(ctrl::Bootstrap& boot, const harness::Context& ctx, const RunSettings& s)
      : boot_(boot), ctx_(ctx), s_(s), dead_(boot.size()) {}

  // Measures `pairs` (disjoint) as one round; returns one attempt per pair.
  std::vector<Attempt> round(const std::vector<Pair>& pairs, std::size_t round_no);
  void finish();
  [[nodiscard]] bool dead(std::uint32_t r) const { return !dead_[r].empty(); }
  [[nodiscard]] std::string describe(std::uint32_t r) const { return boot_.describe_rank(r); }

 private:
  struct Live {
    Pair pair;
    std::optional<std::string> ends[2];  // endpoints (hex) of a and b
    std::optional<Attempt> halves[2];    // what a and b measured
    std::string failure;                 // a setup failure, one line
  };
  void send(std::uint32_t r, const ctrl::Message& m);
  // Waits until every rank of `from` answered `seq` or the deadline passed; a rank that closed,
  // sent garbage or stayed silent is dead afterwards.
  std::map<std::uint32_t, ctrl::Result> collect(std::vector<std::uint32_t> from, std::uint64_t seq,
                                                std::chrono::steady_clock::time_point deadline,
                                                const std::string& what);
  void mark_dead(std::uint32_t r, std::string why);
  void setup(std::vector<Live>& live, std::size_t round_no, std::unique_ptr<PairLink>& mine, int& my_side);
  void connect(std::vector<Live>& live, std::unique_ptr<PairLink>& mine, int my_side);
  Attempt run_own(PairLink& link, int side, const Live& l);

  ctrl::Bootstrap& boot_;
  const harness::Context& ctx_;
  const RunSettings& s_;
  std::vector<std::string> dead_;  // by rank: why it is dead, "" while alive
  std::uint64_t seq_ = 0;
};

void Leader::mark_dead(std::uint32_t r, std::string why) {
  if (dead_[r].empty()) {
    spdlog::warn("{}", why);
    dead_[r] = std::move(why);
  }
}

void Leader::send(std::uint32_t r, const ctrl::Message& m) {
  if (dead(r)) return;
  try {
    boot_.channel_to(r).send(m, std::chrono::seconds(5));
  } catch (const std::exception& e) {
    mark_dead(r, fmt::format("{} is unreachable: {}", describe(r), e.what()));
  }
}

std::map<std::uint32_t, ctrl::Result> Leader::collect(std::vector<std::uint32_t> from, std::uint64_t seq,
                                                      std::chrono::steady_clock::time_point deadline,
                                                      const std::string& what) {
  std::map<std::uint32_t, ctrl::Result> got;
  while (!from.empty()) {
    bool any = false;
    for (auto it = from.begin(); it != from.end();) {
      const std::uint32_t r = *it;
      auto& ch = boot_.channel_to(r);
      bool drop = false;
      try {
        switch (ch.poll_incoming()) {
          case ctrl::Channel::Incoming::kNothing: break;
          case ctrl::Channel::Incoming::kClosed:
            mark_dead(r, fmt::format("{} closed its connection during {}", describe(r), what));
            drop = true;
            break;
          case ctrl::Channel::Incoming::kMessage: {
            const ctrl::Message m = ch.recv(std::chrono::seconds(5));
            any = true;
            if (const auto* res = std::get_if<ctrl::Result>(&m); res != nullptr && res->sequence == seq) {
              got[r] = *res;
              drop = true;
            } else if (const auto* err = std::get_if<ctrl::Error>(&m)) {
              mark_dead(r, fmt::format("{} gave up: {}", describe(r), err->text));
              drop = true;
            }
            break;
          }
        }
      } catch (const std::exception& e) {
        mark_dead(r, fmt::format("{} during {}: {}", describe(r), what, e.what()));
        drop = true;
      }
      it = drop ? from.erase(it) : it + 1;
    }
    if (from.empty()) break;
    if (std::chrono::steady_clock::now() > deadline) {
      for (const auto r : from) {
        mark_dead(r, fmt::format("{} did not answer within {:.0f} s during {} (stopped or unreachable)", describe(r),
                                 what == "setup" ? s_.setup_s : s_.pair_timeout_s, what));
      }
      break;
    }
    if (!any) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return got;
}

void Leader::setup(std::vector<Live>& live, std::size_t round_no, std::unique_ptr<PairLink>& mine, int& my_side) {
  const std::uint64_t seq = ++seq_;
  std::vector<std::uint32_t> asked;
  std::vector<bool> busy(boot_.size(), false);
  for (auto& l : live) {
    const std::uint32_t ends[2] = {l.pair.a, l.pair.b};
    for (int side = 0; side < 2; ++side) {
      const std::uint32_t r = ends[side];
      busy[r] = true;
      if (r == 0) {
        try {
          mine = std::make_unique<PairLink>(ctx_, s_.link);
          my_side = side;
          l.ends[side] = endpoints_hex(*mine);
        } catch (const std::exception& e) {
          l.failure = fmt::format("{}: setup: {}", describe(0), e.what());
        }
        continue;
      }
      send(r, ctrl::Command{seq,
                            "setup",
                            {{"partner", std::to_string(ends[1 - side])},
                             {"side", side == 0 ? "A" : "B"},
                             {"round", std::to_string(round_no)}},
                            0});
      asked.push_back(r);
    }
  }
  for (std::uint32_t r = 1; r < boot_.size(); ++r) {
    if (!busy[r]) send(r, ctrl::Command{seq, "idle", {}, 0});
  }
  const auto got = collect(asked, seq, std::chrono::steady_clock::now() + millis(s_.setup_s), "setup");
  for (auto& l : live) {
    const std::uint32_t ends[2] = {l.pair.a, l.pair.b};
    for (int side = 0; side < 2; ++side) {
      const auto it = got.find(ends[side]);
      if (it == got.end()) continue;
      if (it->second.status != ctrl::ResultStatus::kOk) {
        l.failure = fmt::format("{}: setup: {}", describe(ends[side]), it->second.error);
      } else {
        l.ends[side] = it->second.json;
      }
    }
  }
}

void Leader::connect(std::vector<Live>& live, std::unique_ptr<PairLink>& mine, int my_side) {
  const std::uint64_t seq = ++seq_;
  std::vector<std::uint32_t> asked;
  for (auto& l : live) {
    const std::uint32_t ends[2] = {l.pair.a, l.pair.b};
    if (l.failure.empty() && !(l.ends[0] && l.ends[1])) {
      const std::uint32_t gone = l.ends[0] ? ends[1] : ends[0];
      l.failure = dead(gone) ? dead_[gone] : fmt::format("{} sent no endpoints", describe(gone));
    }
    for (int side = 0; side < 2; ++side) {
      const std::uint32_t r = ends[side];
      if (!l.failure.empty()) {
        if (r != 0) send(r, ctrl::Command{seq, "drop", {}, 0});
        continue;
      }
      if (r != 0) {
        send(r, ctrl::Command{seq, "connect", {{"endpoints", *l.ends[1 - side]}}, 0});
        asked.push_back(r);
        continue;
      }
      try {
        mine->connect(endpoints_from_hex(*l.ends[1 - my_side]));
      } catch (const std::exception& e) {
        l.failure = fmt::format("{}: connect: {}", describe(0), e.what());
      }
    }
  }
  const auto got = collect(asked, seq, std::chrono::steady_clock::now() + millis(s_.setup_s), "setup");
  for (auto& l : live) {
    if (!l.failure.empty()) continue;
    for (const std::uint32_t r : {l.pair.a, l.pair.b}) {
      if (r == 0) continue;
      const auto it = got.find(r);
      if (it == got.end()) {
        l.failure = dead_[r].empty() ? fmt::format("{} did not connect", describe(r)) : dead_[r];
      } else if (it->second.status != ctrl::ResultStatus::kOk) {
        l.failure = fmt::format("{}: connect: {}", describe(r), it->second.error);
      }
    }
    if (!l.failure.empty()) {
      for (const std::uint32_t r : {l.pair.a, l.pair.b}) {
        if (r != 0 && got.count(r) != 0) send(r, ctrl::Command{seq, "drop", {}, 0});
      }
    }
  }
}

Attempt Leader::run_own(PairLink& link, int side, const Live& l) {
  const std::uint32_t partner = side == 0 ? l.pair.b : l.pair.a;
  try {
    PairPlan plan = s_.plan;
    plan.partner = describe(partner);
    return measure_pair(link, side == 0 ? Side::kA : Side::kB, plan, ctx_.device().name(), ctx_.port().port_num);
  } catch (const std::exception& e) {
    Attempt a;
    a.status = Status::kFailed;
    a.reason = fmt::format("{}: {}", describe(0), e.what());
    return a;
  }
}

std::vector<Attempt> Leader::round(const std::vector<Pair>& pairs, std::size_t round_no) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<Attempt> out(pairs.size());
  std::vector<Live> live;
  std::vector<std::size_t> live_index;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const Pair p = pairs[i];
    if (dead(p.a) || dead(p.b)) {
      out[i] = combine(nullptr, nullptr, s_.link.lanes, 0, fmt::format("not run: {}", dead_[dead(p.a) ? p.a : p.b]));
      continue;
    }
    live.push_back(Live{p, {}, {}, ""});
    live_index.push_back(i);
  }
  std::unique_ptr<PairLink> mine;
  int my_side = -1;
  setup(live, round_no, mine, my_side);
  // Every QP of the round reaches RTS before any pair starts: a step message that reached a QP
  // still in INIT would be lost, and its retries could run out.
  connect(live, mine, my_side);
  const std::uint64_t seq = ++seq_;
  const auto t_run = std::chrono::steady_clock::now();
  std::vector<std::uint32_t> running;
  Live* own = nullptr;
  for (auto& l : live) {
    if (!l.failure.empty()) continue;
    const std::uint32_t ends[2] = {l.pair.a, l.pair.b};
    for (const std::uint32_t r : ends) {
      if (r == 0) {
        own = &l;
        continue;
      }
      send(r, ctrl::Command{seq, "go", {}, 0});
      running.push_back(r);
    }
  }
  if (own != nullptr) own->halves[my_side] = run_own(*mine, my_side, *own);
  mine.reset();
  const auto got = collect(running, seq, t_run + millis(s_.pair_timeout_s), "the measurement");
  for (std::size_t k = 0; k < live.size(); ++k) {
    Live& l = live[k];
    const std::uint32_t ends[2] = {l.pair.a, l.pair.b};
    for (int side = 0; side < 2; ++side) {
      const auto it = got.find(ends[side]);
      if (it == got.end()) continue;
      try {
        if (it->second.status != ctrl::ResultStatus::kOk) throw RunError(it->second.error);
        l.halves[side] = accept::attempt_from_json(json::parse(it->second.json), describe(ends[side]));
      } catch (const std::exception& e) {
        l.failure = fmt::format("{}: {}", describe(ends[side]), e.what());
      }
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::string missing;
    for (int side = 0; side < 2 && missing.empty(); ++side) {
      if (!l.halves[side]) missing = dead(ends[side]) ? dead_[ends[side]] : "";
    }
    Attempt a;
    if (!l.failure.empty()) {
      a = combine(nullptr, nullptr, s_.link.lanes, secs, l.failure);
      if (!dead(ends[0]) && !dead(ends[1])) a.status = Status::kFailed;  // else a timeout
    } else {
      a = combine(l.halves[0] ? &*l.halves[0] : nullptr, l.halves[1] ? &*l.halves[1] : nullptr, s_.link.lanes, secs,
                  missing.empty() ? "no answer" : missing);
    }
    out[live_index[k]] = std::move(a);
  }
  return out;
}

void Leader::finish() {
  for (std::uint32_t r = 1; r < boot_.size(); ++r) send(r, ctrl::Goodbye{});
}

std::vector<accept::Node> gather_nodes(ctrl::Bootstrap& boot, const harness::Context& ctx) {
  const std::string mine =
      json{{"device", ctx.device().name()}, {"port", ctx.port().port_num}, {"gbps", ctx.port().rate_gbps}}.dump();
  const auto all = boot.allgather(std::span(reinterpret_cast<const std::uint8_t*>(mine.data()), mine.size()));
  std::vector<accept::Node> nodes;
  std::map<std::string, int> host_count;
  for (const auto& h : boot.hosts()) ++host_count[h];
  for (std::uint32_t r = 0; r < boot.size(); ++r) {
    const json j = json::parse(std::string(all[r].begin(), all[r].end()));
    const std::string& host = boot.hosts()[r];
    accept::Node n;
    n.name = host_count[host] > 1 ? fmt::format("{}:{}", host, j.at("device").get<std::string>()) : host;
    n.port_gbps = j.at("gbps").get<double>();
    nodes.push_back(std::move(n));
  }
  return nodes;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  if (!f.flush()) throw RunError(fmt::format("cannot write {}", path));
}

std::string round_line(const std::vector<accept::Node>& nodes, Pair p, const Attempt& a) {
  auto g = [](double v) { return std::isnan(v) ? std::string("-") : fmt::format("{:.2f}", v); };
  if (a.status != Status::kOk) {
    return fmt::format("  {}: {} ({})", accept::pair_label(nodes, p), accept::status_name(a.status), a.reason);
  }
  return fmt::format("  {}: {} / {} / {} Gb/s (A->B / B->A / both), latency p50 {} us, p99 {} us",
                     accept::pair_label(nodes, p), g(a.bw_a_to_b_gbps), g(a.bw_b_to_a_gbps), g(a.bw_bidir_gbps),
                     g(a.lat_p50_us), g(a.lat_p99_us));
}

}  // namespace

int lead(ctrl::Bootstrap& boot, const harness::Context& ctx, const accept::Spec& spec, const RunSettings& settings,
         const LeadOutputs& outputs,
         const std::function<accept::Schedule(const std::vector<std::string>&)>& make_schedule) {
  const std::vector<accept::Node> nodes = gather_nodes(boot, ctx);
  std::vector<std::string> names;
  for (const auto& n : nodes) names.push_back(n.name);
  const accept::Schedule schedule = make_schedule(names);
  // A round's setup is two collections (endpoints, then connected), each bounded by setup_s.
  const accept::TimeSettings ts{schedule.rounds.size(), settings.pair_s, settings.pair_timeout_s, 2 * settings.setup_s,
                                spec.retests};
  std::cerr << fmt::format("fabench-accept: {} nodes, {} pairs in {} rounds ({}); {}\n", nodes.size(),
                           schedule.pair_count(), schedule.rounds.size(),
                           outputs.pairs_file.empty() ? outputs.schedule : "--pairs " + outputs.pairs_file,
                           accept::describe_upper_bound(ts));
  const auto t_start = std::chrono::steady_clock::now();
  Leader leader(boot, ctx, settings);
  std::vector<PairResult> results;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::size_t> index;
  for (std::size_t r = 0; r < schedule.rounds.size(); ++r) {
    const auto& pairs = schedule.rounds[r];
    std::cerr << fmt::format("round {}/{}:\n", r + 1, schedule.rounds.size());
    auto attempts = leader.round(pairs, r);
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      std::cerr << round_line(nodes, pairs[i], attempts[i]) << "\n";
      index[{pairs[i].a, pairs[i].b}] = results.size();
      results.push_back(PairResult{pairs[i], static_cast<std::uint32_t>(r), {std::move(attempts[i])}});
    }
  }
  accept::Judgement j = accept::judge(spec, nodes, results);
  for (std::uint32_t wave = 1; !j.retest.empty(); ++wave) {
    const accept::Schedule again = accept::retest_schedule(schedule, j.retest);
    for (std::size_t r = 0; r < again.rounds.size(); ++r) {
      const auto& pairs = again.rounds[r];
      std::cerr << fmt::format("retest {}, round {}/{}:\n", wave, r + 1, again.rounds.size());
      auto attempts = leader.round(pairs, r);
      for (std::size_t i = 0; i < pairs.size(); ++i) {
        std::cerr << round_line(nodes, pairs[i], attempts[i]) << "\n";
        auto it = index.find({pairs[i].a, pairs[i].b});
        if (it == index.end()) it = index.find({pairs[i].b, pairs[i].a});
        results[it->second].attempts.push_back(std::move(attempts[i]));
      }
    }
    j = accept::judge(spec, nodes, results);
  }
  leader.finish();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  const accept::Report report{spec, nodes, results, j};
  std::cout << accept::report_text(report) << std::flush;
  std::cerr << fmt::format("fabench-accept: measured in {:.1f} s (bound {:.1f} s)\n", secs,
                           accept::run_upper_bound_s(ts));
  const json meta{{"tool", "fabench-accept"},
                  {"version", std::string(ctrl::build_version())},
                  {"schedule", outputs.pairs_file.empty() ? outputs.schedule : "pairs:" + outputs.pairs_file},
                  {"rounds", schedule.rounds.size()},
                  {"qps", settings.link.lanes},
                  {"bw_bytes", settings.link.bw_bytes},
                  {"bw_seconds", settings.plan.seconds},
                  {"lat_iters", settings.plan.lat_iters},
                  {"bound_s", accept::run_upper_bound_s(ts)},
                  {"elapsed_s", secs},
                  {"device", ctx.device().name()}};
  if (!outputs.json_path.empty()) write_file(outputs.json_path, accept::report_json(report, meta).dump(2) + "\n");
  if (!outputs.junit_path.empty()) write_file(outputs.junit_path, accept::report_junit(report));
  return j.ok() ? 0 : 1;
}

int follow(ctrl::Bootstrap& boot, const harness::Context& ctx, const RunSettings& settings) {
  (void)gather_nodes(boot, ctx);
  auto& ch = boot.channel_to(0);
  const auto wait = millis(settings.setup_s + settings.pair_timeout_s + 30);
  std::unique_ptr<PairLink> link;
  Side side = Side::kA;
  std::uint32_t partner = 0;
  for (;;) {
    ctrl::Message m;
    try {
      m = ch.recv(wait);
    } catch (const std::exception& e) {
      spdlog::error("rank {}: {}", boot.rank(), e.what());
      return 1;
    }
    if (std::holds_alternative<ctrl::Goodbye>(m)) return 0;
    if (const auto* err = std::get_if<ctrl::Error>(&m)) {
      spdlog::error("{}", err->text);
      return 1;
    }
    const auto* cmd = std::get_if<ctrl::Command>(&m);
    if (cmd == nullptr) {
      spdlog::error("rank {}: unexpected {} from rank 0", boot.rank(), ctrl::type_name(ctrl::type_of(m)));
      return 1;
    }
    ctrl::Result res{cmd->sequence, ctrl::ResultStatus::kOk, "", "", {}};
    try {
      if (cmd->benchmark == "idle" || cmd->benchmark == "drop") {
        link.reset();
        continue;
      }
      if (cmd->benchmark == "setup") {
        link.reset();
        side = param(*cmd, "side") == "A" ? Side::kA : Side::kB;
        partner = static_cast<std::uint32_t>(std::stoul(param(*cmd, "partner")));
        link = std::make_unique<PairLink>(ctx, settings.link);
        res.json = endpoints_hex(*link);
      } else if (cmd->benchmark == "connect" && link) {
        link->connect(endpoints_from_hex(param(*cmd, "endpoints")));
      } else if (cmd->benchmark == "go" && link) {
        PairPlan plan = settings.plan;
        plan.partner = boot.describe_rank(partner);
        res.json =
            accept::attempt_to_json(measure_pair(*link, side, plan, ctx.device().name(), ctx.port().port_num)).dump();
        link.reset();
      } else {
        throw RunError(fmt::format("unexpected command {}", cmd->benchmark));
      }
    } catch (const std::exception& e) {
      link.reset();
      res.status = ctrl::ResultStatus::kFailed;
      res.error = e.what();
    }
    try {
      ch.send(res);
    } catch (const std::exception& e) {
      spdlog::error("rank {}: {}", boot.rank(), e.what());
      return 1;
    }
  }
}

}  // namespace fabench::acceptbench
