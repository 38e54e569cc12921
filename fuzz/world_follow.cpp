// The session protocol of the N-rank binaries (world/driver.hpp: fabench-coll,
// fabench-kv) on rank k: world::follow() reading rank 0's Commands (run with
// its "bench" and parameters, go, bye) and Errors, after a real Bootstrap
// rendezvous, from a byte stream rank 0 sends over TCP loopback
// (fake_root.hpp). The Job is a stand-in: prepare() refuses benchmarks past
// the fourth (as an index out of range would), run() fails on odd iteration
// counts. Whatever rank 0 sends, follow() returns 0 (after bye) or 1 (its
// one error line), throws nothing, calls run() only after a prepare() that
// succeeded, and with the stream and its end all there never waits.
//
// Input: byte 0 picks the world size (2..8), byte 1 our rank (1..size-1);
// the rest is what rank 0 sends.
#include <chrono>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>

#include "fabench/world/driver.hpp"
#include "fake_root.hpp"

using namespace fabench;
using namespace std::chrono_literals;

namespace {

constexpr std::size_t kPrefix = 2;

class StandInJob : public world::Job {
 public:
  void prepare(std::size_t bench, const world::Params& params) override {
    prepared_ = false;
    if (bench >= 4) throw std::out_of_range("no benchmark " + std::to_string(bench));
    for (const auto& [k, v] : params) (void)(k.size() + v.size());
    prepared_ = true;
  }
  world::RankReport run(std::uint64_t iterations, const world::Watch& watch) override {
    FUZZ_CHECK(prepared_);
    FUZZ_CHECK(watch.channels.size() == 1);
    world::RankReport r;
    r.ok = iterations % 2 == 0;
    if (!r.ok) r.error = "odd iteration count";
    r.record.set_u64("iterations", iterations).set_f64("seconds", 1.5);
    return r;
  }
  [[nodiscard]] std::string name(std::size_t bench) const override { return "bench/" + std::to_string(bench); }

 private:
  bool prepared_ = false;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < kPrefix || size > 16 * 1024) return 0;
  static const bool quiet = [] {
    std::cerr.rdbuf(nullptr);  // follow()'s error lines, one per input
    return true;
  }();
  (void)quiet;
  const auto cfg = fuzz::rank_config(data, std::vector<std::uint8_t>(data + kPrefix, data + size));
  std::optional<ctrl::Bootstrap> boot;
  try {
    boot.emplace(ctrl::Bootstrap::connect(cfg));
  } catch (const ctrl::CtrlError& e) {
    FUZZ_CHECK(e.kind() != ctrl::CtrlError::Kind::kTimeout && e.kind() != ctrl::CtrlError::Kind::kNetwork);
    fuzz::root().settle();
    return 0;
  }
  StandInJob job;
  world::DriverOptions o;
  o.prog = "fuzz";
  o.timeout = 5s;
  const auto t0 = std::chrono::steady_clock::now();
  const int rc = world::follow(*boot, job, o);
  FUZZ_CHECK(rc == 0 || rc == 1);
  FUZZ_CHECK(std::chrono::steady_clock::now() - t0 < 4s);  // no wait ran out
  boot.reset();
  fuzz::root().settle();
  return 0;
}
