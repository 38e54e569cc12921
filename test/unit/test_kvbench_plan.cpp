// fabench-kv's pieces between the plan and the report: the WR sweep's re-split of a contiguous
// plan (every byte once on both sides, WR and SGE limits, request boundaries), rank 0's
// combination of the ranks' results, the sweep's knee, and TransferResult's wire form.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "fabench/base/error.hpp"
#include "fabench/kv/layout.hpp"
#include "fabench/kv/plan.hpp"
#include "fabench/kvbench/roles.hpp"
#include "fabench/kvbench/session.hpp"
#include "fabench/kvbench/transfer.hpp"

using namespace fabench::kvbench;
namespace kv = fabench::kv;

namespace {

// Llama-3.1-8B at ISL 64: 4 pages of 32 KiB per (layer, K/V), 8 MiB per request.
kv::KvSpec llama_contiguous(std::uint32_t batch, kv::Direction dir = kv::Direction::kPush) {
  kv::KvSpec s;
  s.model = kv::preset("llama-3.1-8b");
  s.isl = 64;
  s.batch = batch;
  s.layout = kv::Layout::kContiguous;
  s.direction = dir;
  return s;
}

// 1 layer, 1 head of 4 fp8 elems, pages of 4 tokens, ISL 5: 2 pages x K, V x 16 B = 64 B a request.
kv::KvSpec tiny_contiguous(std::uint32_t batch) {
  kv::KvSpec s;
  s.model = kv::ModelShape{"tiny", 1, 1, 4, false, 0, 0, kv::Dtype::kFp8};
  s.page_tokens = 4;
  s.isl = 5;
  s.batch = batch;
  s.layout = kv::Layout::kContiguous;
  return s;
}

kv::PairPlan only_plan(const kv::KvSpec& s) {
  auto plans = kv::make_plans(s);
  REQUIRE(plans.size() == 1);
  return plans.front();
}

struct Range {
  std::uint64_t offset;
  std::uint64_t length;
};

// "" when `ranges` cover exactly the bytes of `expected`, each once; else what is wrong.
std::string same_bytes_once(std::vector<Range> ranges, std::vector<Range> expected, const char* side) {
  const auto by_offset = [](const Range& a, const Range& b) { return a.offset < b.offset; };
  std::sort(ranges.begin(), ranges.end(), by_offset);
  std::sort(expected.begin(), expected.end(), by_offset);
  std::uint64_t total = 0;
  std::uint64_t expected_total = 0;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    if (ranges[i].length == 0) return fmt::format("{}: an empty range", side);
    if (i > 0 && ranges[i].offset < ranges[i - 1].offset + ranges[i - 1].length) {
      return fmt::format("{}: byte {} covered twice", side, ranges[i].offset);
    }
    total += ranges[i].length;
  }
  for (const auto& r : expected) expected_total += r.length;
  if (total != expected_total) return fmt::format("{}: {} bytes, expected {}", side, total, expected_total);
  // No overlap and the same total: every range must lie inside an expected one.
  for (const auto& r : ranges) {
    const bool inside = std::any_of(expected.begin(), expected.end(), [&](const Range& e) {
      return r.offset >= e.offset && r.offset + r.length <= e.offset + e.length;
    });
    if (!inside) return fmt::format("{}: bytes [{}, +{}) are not in the original plan", side, r.offset, r.length);
  }
  return {};
}

// Checks `p` = resplit(whole, wr_bytes, sges); "" when it is right.
std::string check_resplit(const kv::PairPlan& whole, const kv::PairPlan& p, std::uint64_t wr_bytes,
                          std::uint32_t sges) {
  if (p.prefill_rank != whole.prefill_rank || p.decode_rank != whole.decode_rank || p.direction != whole.direction ||
      p.bytes != whole.bytes) {
    return "the pair, direction or byte count changed";
  }
  if (p.request_first_wr.size() != whole.request_first_wr.size()) return "request count changed";
  if (p.request_first_wr.front() != 0 || p.request_first_wr.back() != p.wrs.size()) return "request bounds";
  for (std::size_t r = 0; r + 1 < p.request_first_wr.size(); ++r) {
    if (p.request_first_wr[r] > p.request_first_wr[r + 1]) return "request bounds go backwards";
    std::vector<Range> local;
    std::vector<Range> remote;
    std::vector<Range> whole_local;
    std::vector<Range> whole_remote;
    for (auto w = whole.request_first_wr[r]; w < whole.request_first_wr[r + 1]; ++w) {
      const kv::Wr& wr = whole.wrs[w];
      whole_remote.push_back({wr.remote_offset, wr.length});
      for (const auto& seg : whole.local(wr)) whole_local.push_back({seg.offset, seg.length});
    }
    for (auto w = p.request_first_wr[r]; w < p.request_first_wr[r + 1]; ++w) {
      const kv::Wr& wr = p.wrs[w];
      if (wr.length == 0 || wr.length > wr_bytes) return fmt::format("WR {} of {} bytes", w, wr.length);
      if (wr.segment_count == 0 || wr.segment_count > sges)
        return fmt::format("WR {} with {} SGEs", w, wr.segment_count);
      std::uint64_t sum = 0;
      const auto segs = p.local(wr);
      for (std::size_t i = 0; i < segs.size(); ++i) {
        if (i > 0 && segs[i].offset != segs[i - 1].offset + segs[i - 1].length) return "segments not back to back";
        local.push_back({segs[i].offset, segs[i].length});
        sum += segs[i].length;
      }
      if (sum != wr.length) return fmt::format("WR {}: segments sum to {}, not {}", w, sum, wr.length);
      remote.push_back({wr.remote_offset, wr.length});
      // The local bytes land where the original plan sends them.
      const auto src = std::find_if(whole.wrs.begin(), whole.wrs.end(), [&](const kv::Wr& o) {
        return wr.remote_offset >= o.remote_offset && wr.remote_offset + wr.length <= o.remote_offset + o.length;
      });
      if (src == whole.wrs.end()) return fmt::format("WR {}: remote range in no original WR", w);
      if (segs.front().offset - whole.segments[src->first_segment].offset != wr.remote_offset - src->remote_offset) {
        return fmt::format("WR {}: local bytes moved against the remote ones", w);
      }
    }
    if (auto e = same_bytes_once(local, whole_local, "local"); !e.empty()) return fmt::format("request {}: {}", r, e);
    if (auto e = same_bytes_once(remote, whole_remote, "remote"); !e.empty()) {
      return fmt::format("request {}: {}", r, e);
    }
  }
  return {};
}

TransferResult result(std::vector<double> iterations, std::vector<double> requests, std::uint64_t wrs,
                      std::uint64_t bytes, std::uint64_t wrong) {
  TransferResult r;
  r.iteration_seconds = std::move(iterations);
  r.request_seconds = std::move(requests);
  r.wrs = wrs;
  r.bytes = bytes;
  r.wrong_pages = wrong;
  return r;
}

}  // namespace

TEST_CASE("kvbench resplit: the contiguous plan is what the sweep cuts", "[kvbench]") {
  const kv::PairPlan whole = only_plan(llama_contiguous(2));
  REQUIRE(whole.wrs.size() == 2);  // one region per request
  CHECK(whole.request_first_wr == std::vector<std::uint32_t>{0, 1, 2});
  CHECK(whole.bytes == 2 * 8388608);
  CHECK(whole.wrs[0].length == 8388608);
  CHECK(whole.wrs[0].segment_count == 1);
}

TEST_CASE("kvbench resplit: every byte once on both sides, WRs and SGEs within their limits", "[kvbench]") {
  struct Case {
    std::uint32_t batch;
    std::uint64_t wr_bytes;
    std::uint32_t sges;
    std::size_t wrs_per_request;
  };
  for (const auto dir : {kv::Direction::kPush, kv::Direction::kPull}) {
    for (const Case k : {Case{1, 65536, 1, 128}, Case{2, 1 << 20, 3, 8}, Case{2, 3000000, 2, 3}, Case{2, 8388608, 4, 1},
                         Case{1, std::uint64_t{1} << 30, 1, 1}, Case{2, 4096, 7, 2048}}) {
      INFO(fmt::format("{} batch {} wr_bytes {} sges {}", kv::direction_name(dir), k.batch, k.wr_bytes, k.sges));
      const kv::PairPlan whole = only_plan(llama_contiguous(k.batch, dir));
      const kv::PairPlan p = resplit(whole, k.wr_bytes, k.sges);
      CHECK(check_resplit(whole, p, k.wr_bytes, k.sges) == "");
      CHECK(p.wrs.size() == k.batch * k.wrs_per_request);
      REQUIRE(p.request_first_wr.size() == k.batch + 1);
      for (std::uint32_t r = 0; r <= k.batch; ++r) CHECK(p.request_first_wr[r] == r * k.wrs_per_request);
    }
  }
}

TEST_CASE("kvbench resplit: a length the WR size does not divide; its segments", "[kvbench]") {
  const kv::PairPlan whole = only_plan(llama_contiguous(2));
  const kv::PairPlan p = resplit(whole, 3000000, 2);
  REQUIRE(p.wrs.size() == 6);
  CHECK(p.request_first_wr == std::vector<std::uint32_t>{0, 3, 6});
  const std::vector<std::uint64_t> lengths{3000000, 3000000, 2388608};
  for (std::size_t w = 0; w < 6; ++w) {
    INFO(w);
    CHECK(p.wrs[w].length == lengths[w % 3]);
    CHECK(p.wrs[w].remote_offset == whole.wrs[w / 3].remote_offset + (w % 3) * 3000000);
    REQUIRE(p.wrs[w].segment_count == 2);
    const auto segs = p.local(p.wrs[w]);
    CHECK(segs[0].offset == whole.segments[w / 3].offset + (w % 3) * 3000000);
    CHECK(segs[0].length == lengths[w % 3] / 2);
    CHECK(segs[1].length == lengths[w % 3] - lengths[w % 3] / 2);
  }
  // 1 MiB in 3 SGEs: 349525, 349525, then the rest.
  const kv::PairPlan three = resplit(whole, 1 << 20, 3);
  const auto segs = three.local(three.wrs[0]);
  REQUIRE(segs.size() == 3);
  CHECK(segs[0].length == 349525);
  CHECK(segs[1].length == 349525);
  CHECK(segs[2].length == 349526);
}

TEST_CASE("kvbench resplit: more SGEs than bytes in a WR: one byte each", "[kvbench]") {
  const kv::PairPlan whole = only_plan(tiny_contiguous(2));
  REQUIRE(whole.bytes == 128);
  REQUIRE(whole.wrs.size() == 2);
  for (const auto& [wr_bytes, sges] :
       {std::pair<std::uint64_t, std::uint32_t>{5, 8}, {1, 4}, {3, 3}, {64, 100}, {100, 64}, {7, 2}}) {
    INFO(fmt::format("wr_bytes {} sges {}", wr_bytes, sges));
    const kv::PairPlan p = resplit(whole, wr_bytes, sges);
    CHECK(check_resplit(whole, p, wr_bytes, sges) == "");
    const std::uint64_t per_request = (64 + wr_bytes - 1) / wr_bytes;
    CHECK(p.wrs.size() == 2 * per_request);
    CHECK(p.request_first_wr == std::vector<std::uint32_t>{0, static_cast<std::uint32_t>(per_request),
                                                           static_cast<std::uint32_t>(2 * per_request)});
    for (const auto& wr : p.wrs) CHECK(wr.segment_count == std::min<std::uint64_t>(sges, wr.length));
  }
  const kv::PairPlan p = resplit(whole, 5, 8);
  CHECK(p.wrs[12].length == 4);  // 64 = 12 x 5 + 4
  CHECK(p.wrs[12].segment_count == 4);
  CHECK(p.segments.size() == 2 * (12 * 5 + 4));
}

TEST_CASE("kvbench resplit: refuses zero sizes and plans that are not contiguous", "[kvbench]") {
  const kv::PairPlan whole = only_plan(tiny_contiguous(1));
  CHECK_THROWS_AS(resplit(whole, 0, 1), fabench::UserError);
  CHECK_THROWS_AS(resplit(whole, 4, 0), fabench::UserError);
  kv::PairPlan two_segments = whole;
  two_segments.segments = {{0, 32}, {32, 32}};
  two_segments.wrs[0].segment_count = 2;
  CHECK_THROWS_AS(resplit(two_segments, 4, 1), fabench::UserError);
}

TEST_CASE("kvbench plans_for: a sweep point is the contiguous plan re-split", "[kvbench]") {
  KvBench b;
  b.spec = tiny_contiguous(2);
  b.kind = BenchKind::kSweep;
  b.wr_bytes = 16;
  b.sges = 2;
  const auto plans = plans_for(b);
  REQUIRE(plans.size() == 1);
  CHECK(plans[0].wrs.size() == 8);
  CHECK(check_resplit(only_plan(b.spec), plans[0], 16, 2) == "");
  b.kind = BenchKind::kTransfer;
  CHECK(plans_for(b)[0].wrs.size() == 2);
}

TEST_CASE("kvbench combine: the slowest initiator per iteration and per request", "[kvbench]") {
  const TransferResult a = result({1, 5, 2}, {1, 0.5, 5, 4, 2, 1}, 10, 100, 0);
  const TransferResult b = result({3, 1, 2.5}, {3, 2, 0.5, 1, 2.5, 2.5}, 20, 200, 1);
  const TransferResult decode = result({}, {}, 0, 0, 3);  // a decode rank of a push: checks, no times
  for (const auto& ranks : {std::vector<TransferResult>{a, b, decode}, std::vector<TransferResult>{decode, b, a}}) {
    const Combined c = combine(ranks);
    CHECK(c.iteration_seconds == std::vector<double>{3, 5, 2.5});
    CHECK(c.request_seconds == std::vector<double>{3, 2, 5, 4, 2.5, 2.5});
    CHECK(c.wrs == 30);
    CHECK(c.bytes == 300);
    CHECK(c.wrong_pages == 4);
  }
  const Combined one = combine({a});
  CHECK(one.iteration_seconds == a.iteration_seconds);
  CHECK(one.request_seconds == a.request_seconds);
  const Combined none = combine({decode, decode});
  CHECK(none.iteration_seconds.empty());
  CHECK(none.request_seconds.empty());
  CHECK(none.wrong_pages == 6);
  const Combined empty = combine({});
  CHECK(empty.iteration_seconds.empty());
  CHECK(empty.wrs == 0);
}

TEST_CASE("kvbench knee: the smallest WR that reaches a fraction of the best rate", "[kvbench]") {
  const std::vector<std::pair<std::uint64_t, double>> curve{{64, 1}, {256, 4}, {1024, 8}, {4096, 10}, {16384, 9.5}};
  CHECK(knee(curve, 0.5) == 1024);
  CHECK(knee(curve, 0.8) == 1024);  // exactly 8 of 10 counts
  CHECK(knee(curve, 0.81) == 4096);
  CHECK(knee(curve, 0.9) == 4096);
  CHECK(knee(curve, 1.0) == 4096);
  CHECK(knee(curve, 0.1) == 64);
  CHECK(knee(curve, 0.0) == 64);
  CHECK(knee(curve, 1.01) == 0);  // never reached

  const std::vector<std::pair<std::uint64_t, double>> shuffled{{16384, 9.5}, {256, 4}, {4096, 10}, {64, 1}, {1024, 8}};
  CHECK(knee(shuffled, 0.5) == 1024);
  CHECK(knee(shuffled, 0.9) == 4096);
  CHECK(knee(shuffled, 0.96) == 4096);
  CHECK(knee(shuffled, 0.94) == 4096);

  // A curve that peaks early and falls: the first size over the bar, not the last.
  CHECK(knee({{1 << 20, 2}, {4096, 10}, {65536, 6}}, 0.5) == 4096);
  CHECK(knee({{1024, 10}, {256, 3}, {64, 6}}, 0.5) == 64);  // not monotone: 64 B already reaches half
  CHECK(knee({{1024, 10}, {256, 3}, {64, 6}}, 0.61) == 1024);

  CHECK(knee({}, 0.5) == 0);
  CHECK(knee({{64, 0}, {128, 0}}, 0.5) == 0);  // nothing moved
  CHECK(knee({{64, 0}, {128, 0}}, 0.0) == 0);
}

TEST_CASE("kvbench TransferResult: to_report and back", "[kvbench]") {
  TransferResult r = result({0.25, 0.5, 0.125}, {0.1, 0.2, 0.3, 0.4, 0.5, 0.6}, 7, 4096, 2);
  const auto rep = r.to_report();
  CHECK(rep.ok);
  CHECK(rep.record.names() == "wrong_pages, wrs, bytes, iteration_seconds, request_seconds");
  CHECK(rep.record.u64("wrong_pages") == 2);
  CHECK(rep.record.list("iteration_seconds") == std::vector<double>{0.25, 0.5, 0.125});
  CHECK(rep.record.list("request_seconds") == std::vector<double>{0.1, 0.2, 0.3, 0.4, 0.5, 0.6});
  const TransferResult back = TransferResult::from_report(rep);
  CHECK(back.ok);
  CHECK(back.error.empty());
  CHECK(back.wrong_pages == 2);
  CHECK(back.wrs == 7);
  CHECK(back.bytes == 4096);
  CHECK(back.iteration_seconds == r.iteration_seconds);
  CHECK(back.request_seconds == r.request_seconds);

  // A rank with nothing timed, and a failed one: both survive the trip.
  const TransferResult idle = TransferResult::from_report(result({}, {}, 0, 0, 5).to_report());
  CHECK(idle.ok);
  CHECK(idle.wrong_pages == 5);
  CHECK(idle.iteration_seconds.empty());
  CHECK(idle.request_seconds.empty());
  r.ok = false;
  r.error = "lane 2: completion error";
  r.closed_channel = 1;
  const TransferResult failed = TransferResult::from_report(r.to_report());
  CHECK_FALSE(failed.ok);
  CHECK(failed.error == "lane 2: completion error");
  CHECK(failed.closed_channel == 1);
}

TEST_CASE("kvbench TransferResult: a record that does not read is not ok, the field named", "[kvbench]") {
  const fabench::world::RankReport good = result({0.25, 0.5}, {0.1, 0.2, 0.3, 0.4}, 7, 4096, 0).to_report();
  const TransferResult back = TransferResult::from_record(good.record);
  CHECK(back.wrs == 7);
  CHECK(back.request_seconds.size() == 4);

  fabench::world::RankReport rep = good;
  rep.record = fabench::ctrl::Record{};
  for (const auto& f : good.record.fields()) {
    if (f.name != "wrs") rep.record.set(f.name, f.value);
  }
  TransferResult bad = TransferResult::from_report(rep);
  CHECK_FALSE(bad.ok);
  CHECK(bad.error ==
        "result record has no field \"wrs\" (it has: wrong_pages, bytes, iteration_seconds, request_seconds)");
  CHECK_THROWS_AS(TransferResult::from_record(rep.record), fabench::ctrl::RecordError);

  rep = good;
  rep.record.set_f64("bytes", 4096);  // a count must be an exact u64
  bad = TransferResult::from_report(rep);
  CHECK_FALSE(bad.ok);
  CHECK(bad.error == "result field \"bytes\" is a f64, expected a u64");

  rep = good;
  rep.record.set_list("request_seconds", {0.1, 0.2, 0.3});  // 2 iterations, 3 requests
  bad = TransferResult::from_report(rep);
  CHECK_FALSE(bad.ok);
  CHECK(bad.error == "a result of 3 request times for 2 iterations (expected a multiple)");
  rep.record.set_list("iteration_seconds", {});
  CHECK_FALSE(TransferResult::from_report(rep).ok);

  // A failed rank keeps its own error, whatever its record.
  rep = good;
  rep.ok = false;
  rep.error = "lane 0: completion error";
  rep.record = fabench::ctrl::Record{};
  bad = TransferResult::from_report(rep);
  CHECK_FALSE(bad.ok);
  CHECK(bad.error == "lane 0: completion error");

  // A field a newer writer adds shifts nothing.
  rep = good;
  rep.record.set_f64("new_field", 1.5);
  CHECK(TransferResult::from_report(rep).ok);
  CHECK(TransferResult::from_report(rep).bytes == 4096);
}
