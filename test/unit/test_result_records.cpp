// Result records: every result that crosses the control channel, by name
// (ctrl::Record), round trips of each binary's result struct through its record
// and through the wire, and a missing or mistyped field named in the error.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <variant>
#include <vector>

#include "fabench/collbench/session.hpp"
#include "fabench/ctrl/record.hpp"
#include "fabench/ctrl/wire.hpp"
#include "fabench/kvbench/transfer.hpp"
#include "fabench/pair/engines.hpp"
#include "fabench/world/driver.hpp"

using fabench::ctrl::Record;
using fabench::ctrl::RecordError;

namespace {

// A record as the peer receives it: encoded into a Result frame and decoded.
Record over_the_wire(const Record& r) {
  const fabench::ctrl::Result sent{9, fabench::ctrl::ResultStatus::kOk, "", "", r};
  const auto back = std::get<fabench::ctrl::Result>(fabench::ctrl::decode(fabench::ctrl::encode(sent)));
  CHECK(back == sent);
  return back.record;
}

}  // namespace

TEST_CASE("Record: fields by name, in the writer's order; set replaces in place", "[ctrl][record]") {
  Record r;
  CHECK(r.empty());
  CHECK(r.names() == "none");
  r.set_f64("seconds", 1.25).set_u64("hash", 0xFFFFFFFFFFFFFFFFULL).set_list("times", {1, 2});
  CHECK(r.size() == 3);
  CHECK(r.names() == "seconds, hash, times");
  CHECK(r.has("hash"));
  CHECK_FALSE(r.has("Hash"));
  CHECK(r.f64("seconds") == 1.25);
  CHECK(r.u64("hash") == 0xFFFFFFFFFFFFFFFFULL);
  CHECK(r.list("times") == std::vector<double>{1, 2});
  r.set_u64("seconds", 3);  // same name: replaced where it was, kind and all
  CHECK(r.names() == "seconds, hash, times");
  CHECK(r.u64("seconds") == 3);
  CHECK(over_the_wire(r) == r);
}

TEST_CASE("Record: a missing field and a field of another kind are named", "[ctrl][record]") {
  Record r;
  r.set_f64("seconds", 1).set_u64("wrong", 0);
  CHECK_THROWS_AS(r.u64("hash"), RecordError);
  CHECK_THROWS_WITH(r.u64("hash"), "result record has no field \"hash\" (it has: seconds, wrong)");
  CHECK_THROWS_WITH(Record{}.f64("seconds"), "result record has no field \"seconds\" (it has: none)");
  CHECK_THROWS_WITH(r.u64("seconds"), "result field \"seconds\" is a f64, expected a u64");
  CHECK_THROWS_WITH(r.f64("wrong"), "result field \"wrong\" is a u64, expected a f64");
  CHECK_THROWS_WITH(r.list("wrong"), "result field \"wrong\" is a u64, expected a f64 list");
}

TEST_CASE("world RankReport: its record crosses the wire unchanged", "[world][record]") {
  fabench::world::RankReport rep;
  rep.record.set_u64("iterations", 1000).set_f64("seconds", 0.125).set_list("per_lane", {0.5, -0.0});
  const Record back = over_the_wire(rep.record);
  CHECK(back == rep.record);
  CHECK(back.u64("iterations") == 1000);
  CHECK(std::signbit(back.list("per_lane")[1]));
}

TEST_CASE("collbench RankResult: to_record, the wire and back, by name", "[collbench][record]") {
  using fabench::collbench::RankResult;
  RankResult r;
  r.seconds = 0.375;
  r.wrong = (1ULL << 53) + 1;            // no double holds it
  r.hash = 0x8000000000000001ULL;        // both halves' edge bits
  r.wire_bytes = 3ULL << 40;
  r.ops_seconds = 0.0625;
  const Record rec = r.to_record();
  CHECK(rec.names() == "seconds, wrong, hash, wire_bytes, ops_seconds");
  const RankResult back = RankResult::from_record(over_the_wire(rec));
  CHECK(back.seconds == r.seconds);
  CHECK(back.wrong == r.wrong);
  CHECK(back.hash == r.hash);
  CHECK(back.wire_bytes == r.wire_bytes);
  CHECK(back.ops_seconds == r.ops_seconds);

  // Through the report: ok, error and closed_channel beside the record.
  r.closed_channel = 2;
  const RankResult rep = RankResult::from_report(r.to_report());
  CHECK(rep.ok);
  CHECK(rep.hash == r.hash);
  CHECK(rep.closed_channel == 2);

  // A field a newer writer adds, or the order changed, shifts nothing.
  Record shuffled;
  for (auto it = rec.fields().rbegin(); it != rec.fields().rend(); ++it) shuffled.set(it->name, it->value);
  shuffled.set_f64("new_field", 9);
  CHECK(RankResult::from_record(shuffled).hash == r.hash);
  CHECK(RankResult::from_record(shuffled).seconds == r.seconds);
}

TEST_CASE("collbench RankResult: a missing field fails the rank, named", "[collbench][record]") {
  using fabench::collbench::RankResult;
  RankResult r;
  r.hash = 42;
  fabench::world::RankReport rep = r.to_report();
  Record without;
  for (const auto& f : rep.record.fields()) {
    if (f.name != "hash") without.set(f.name, f.value);
  }
  CHECK_THROWS_WITH(RankResult::from_record(without),
                    "result record has no field \"hash\" (it has: seconds, wrong, wire_bytes, ops_seconds)");
  rep.record = without;
  const RankResult bad = RankResult::from_report(rep);
  CHECK_FALSE(bad.ok);
  CHECK(bad.error == "result record has no field \"hash\" (it has: seconds, wrong, wire_bytes, ops_seconds)");

  // A failed rank that sent nothing: its own error, zeros.
  fabench::world::RankReport failed;
  failed.ok = false;
  failed.error = "rank 2: stall";
  const RankResult f = RankResult::from_report(failed);
  CHECK_FALSE(f.ok);
  CHECK(f.error == "rank 2: stall");
  CHECK(f.hash == 0);
}

TEST_CASE("kvbench TransferResult: to_record, the wire and back, by name", "[kvbench][record]") {
  using fabench::kvbench::TransferResult;
  TransferResult r;
  r.wrong_pages = 3;
  r.wrs = 17;
  r.bytes = (1ULL << 53) + 1;
  r.iteration_seconds = {0.5, 0.25};
  r.request_seconds = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6};
  const TransferResult back = TransferResult::from_record(over_the_wire(r.to_record()));
  CHECK(back.wrong_pages == 3);
  CHECK(back.wrs == 17);
  CHECK(back.bytes == r.bytes);
  CHECK(back.iteration_seconds == r.iteration_seconds);
  CHECK(back.request_seconds == r.request_seconds);
  CHECK_THROWS_WITH(TransferResult::from_record(Record{}.set_u64("wrong_pages", 0)),
                    "result record has no field \"wrs\" (it has: wrong_pages)");
}

TEST_CASE("pair RunResult: to_record, the wire and back, by name", "[pair][record]") {
  using fabench::pair::RunResult;
  RunResult r;
  r.ok = false;
  r.seconds = 2.5;
  r.messages = 1'000'000;
  r.bytes = (1ULL << 53) + 1;
  r.received = 999'999;
  r.wrong = 7;
  const Record rec = r.to_record();
  CHECK(rec.names() == "ok, seconds, messages, bytes, received, wrong");
  const RunResult back = RunResult::from_record(over_the_wire(rec));
  CHECK_FALSE(back.ok);
  CHECK(back.seconds == 2.5);
  CHECK(back.messages == r.messages);
  CHECK(back.bytes == r.bytes);
  CHECK(back.received == r.received);
  CHECK(back.wrong == 7);
  r.ok = true;
  CHECK(RunResult::from_record(r.to_record()).ok);
  Record without;
  for (const auto& f : rec.fields()) {
    if (f.name != "received") without.set(f.name, f.value);
  }
  CHECK_THROWS_WITH(RunResult::from_record(without),
                    "result record has no field \"received\" (it has: ok, seconds, messages, bytes, wrong)");
}
