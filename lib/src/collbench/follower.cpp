#include <algorithm>
#include <iostream>
#include <variant>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "fabench/collbench/roles.hpp"
#include "fabench/ctrl/wire.hpp"

namespace fabench::collbench {

namespace {

std::string param(const ctrl::Command& c, const std::string& key) {
  for (const auto& [k, v] : c.params) {
    if (k == key) return v;
  }
  return {};
}

ctrl::Result result(std::uint64_t seq, const RankResult& r) {
  ctrl::Result out;
  out.sequence = seq;
  out.status = r.ok ? ctrl::ResultStatus::kOk : ctrl::ResultStatus::kFailed;
  out.error = r.error;
  out.values = {r.seconds, static_cast<double>(r.wrong), static_cast<double>(r.hash >> 32),
                static_cast<double>(r.hash & 0xffffffffULL), static_cast<double>(r.wire_bytes)};
  return out;
}

class Follower {
 public:
  explicit Follower(Session& s) : s_(s), root_(s.boot().channel_to(0)) {}

  int loop() {
    for (;;) {
      // Rank 0 spends time in Google Benchmark between runs: wait generously.
      ctrl::Message msg = root_.recv(s_.options().timeout * 10);
      if (const auto* e = std::get_if<ctrl::Error>(&msg)) return fail(e->text);
      const auto* c = std::get_if<ctrl::Command>(&msg);
      if (c == nullptr) return fail(fmt::format("rank 0 sent {} between runs", ctrl::type_name(ctrl::type_of(msg))));
      if (c->benchmark == "bye") return 0;
      if (c->benchmark != "run") return fail(fmt::format("rank 0 sent unknown command '{}'", c->benchmark));
      if (const int rc = run(*c); rc != 0) return rc;
    }
  }

 private:
  int fail(const std::string& text) const {
    std::cerr << fmt::format("fabench-coll rank {}: error: {}\n", s_.boot().rank(), text);
    return 1;
  }

  int run(const ctrl::Command& c) {
    const std::size_t index = std::stoul(param(c, "spec"));
    CollSpec& spec = s_.spec(index);
    if (auto a = coll::parse_algorithm(param(c, "algo"))) spec.algorithm = *a;
    RankResult ready;
    try {
      s_.prepare(index);
    } catch (const std::exception& e) {
      ready.ok = false;
      ready.error = e.what();
    }
    root_.send(result(c.sequence, ready));
    ctrl::Message go = root_.recv(s_.options().timeout);
    if (const auto* e = std::get_if<ctrl::Error>(&go)) return fail(e->text);
    const auto* g = std::get_if<ctrl::Command>(&go);
    if (g == nullptr || g->benchmark != "go") return fail("rank 0 did not say go");
    Watch watch;
    watch.stall = s_.options().timeout;
    watch.channels = {&root_};
    watch.stop_on_message = true;
    watch.spin_before_yield = s_.options().spin_before_yield;
    RankResult mine = s_.run(c.iterations, watch);
    if (!mine.ok && root_.poll_incoming() != ctrl::Channel::Incoming::kNothing) {
      // Rank 0 spoke or went away mid-run: its word (or its absence) is the news.
      try {
        ctrl::Message m = root_.recv(s_.options().timeout);
        if (const auto* e = std::get_if<ctrl::Error>(&m)) return fail(e->text);
        return fail(fmt::format("rank 0 sent {} during {}", ctrl::type_name(ctrl::type_of(m)), spec.name()));
      } catch (const std::exception& e) {
        return fail(fmt::format("{} during {}", e.what(), spec.name()));
      }
    }
    if (!mine.ok) mine.error = fmt::format("rank {}: {}", s_.boot().rank(), mine.error);
    root_.send(result(g->sequence, mine));
    if (mine.ok) return 0;
    // Rank 0 names the culprit after waiting up to 5 s for every rank's word;
    // if it says nothing a while after that, it is the one stuck.
    const auto wait = std::min(s_.options().timeout, std::chrono::milliseconds(5000)) + std::chrono::seconds(5);
    try {
      ctrl::Message m = root_.recv(wait);
      if (const auto* e = std::get_if<ctrl::Error>(&m)) return fail(e->text);
      return fail(mine.error);
    } catch (const ctrl::CtrlError& e) {
      return fail(fmt::format("{}; then {}", mine.error,
                              e.kind() == ctrl::CtrlError::Kind::kTimeout
                                  ? fmt::format("rank 0 ({}) did not answer within {} (stopped or hung)",
                                                s_.boot().hosts()[0], ctrl::format_duration(wait))
                                  : std::string(e.what())));
    }
  }

  Session& s_;
  ctrl::Channel& root_;
};

}  // namespace

int follow(Session& session) {
  try {
    return Follower(session).loop();
  } catch (const std::exception& e) {
    std::cerr << fmt::format("fabench-coll rank {}: error: {}\n", session.boot().rank(), e.what());
    return 1;
  }
}

}  // namespace fabench::collbench
