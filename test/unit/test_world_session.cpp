// The session protocol (world/driver.hpp) with every rank a thread of this
// process over loopback: the endpoint exchange of a job that connects per run
// (fabench-accept's pairs), and keep_going: a lost rank costs only itself.
#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "ctrl_support.hpp"
#include "fabench/ctrl/bootstrap.hpp"
#include "fabench/world/driver.hpp"

using namespace fabench;
using namespace std::chrono_literals;

namespace {

ctrl::BootstrapConfig session_config(std::uint32_t rank, std::uint32_t size, std::uint16_t port) {
  ctrl::BootstrapConfig c;
  c.rank = rank;
  c.size = size;
  c.master_addr = "127.0.0.1";
  c.master_port = port;
  c.timeout = 5s;
  c.host_name = "host-" + std::to_string(rank);
  return c;
}

// A job whose ranks pair up per run ("pairs": "0-1,2-3"), offer one endpoint
// (qpn 100 + rank) and report the qpn of the one they were handed.
class PairingJob final : public world::Job {
 public:
  explicit PairingJob(std::uint32_t rank, std::uint32_t size) : rank_(rank), partner_(size, -1) {}
  void prepare(std::size_t /*bench*/, const world::Params& params) override {
    std::fill(partner_.begin(), partner_.end(), -1);
    for (const auto& [k, v] : params) {
      for (std::size_t at = 0; k == "pairs" && at < v.size(); at += 4) {
        const int a = v[at] - '0';
        const int b = v[at + 2] - '0';
        partner_[static_cast<std::size_t>(a)] = b;
        partner_[static_cast<std::size_t>(b)] = a;
      }
    }
    got_ = 0;
  }
  [[nodiscard]] bool connects_per_run() const override { return true; }
  [[nodiscard]] std::vector<verbs::Endpoint> endpoints() const override {
    verbs::Endpoint ep;
    ep.qpn = 100 + rank_;
    return {ep};
  }
  [[nodiscard]] int connect_to(std::uint32_t rank) const override { return partner_[rank]; }
  void connect(int /*rank*/, std::span<const verbs::Endpoint> remote) override {
    got_ = remote.empty() ? 0 : remote.front().qpn;
  }
  [[nodiscard]] world::RankReport run(std::uint64_t /*iterations*/, const world::Watch& /*watch*/) override {
    world::RankReport r;
    r.record.set_u64("peer_qpn", got_);
    return r;
  }
  [[nodiscard]] std::string name(std::size_t bench) const override { return "run " + std::to_string(bench); }

 private:
  std::uint32_t rank_;
  std::vector<int> partner_;
  std::uint32_t got_ = 0;
};

// Rank 0's part: `lead` with the Leader; the others follow (a rank in `quitters`
// leaves right after the rendezvous). Returns each follower's exit status.
std::vector<int> run_world(std::uint32_t size, const world::DriverOptions& o,
                           const std::vector<std::uint32_t>& quitters,
                           const std::function<void(world::Leader&)>& lead) {
  const std::uint16_t port = test::unused_port();
  std::vector<int> status(size, -1);
  std::vector<std::thread> threads;
  for (std::uint32_t r = 0; r < size; ++r) {
    threads.emplace_back([&, r] {
      auto boot = ctrl::Bootstrap::connect(session_config(r, size, port));
      PairingJob job(r, size);
      if (std::find(quitters.begin(), quitters.end(), r) != quitters.end()) return;
      if (r != 0) {
        status[r] = world::follow(boot, job, o);
        return;
      }
      world::Leader leader(boot, job, o);
      lead(leader);
      leader.finish();
      status[0] = 0;
    });
  }
  for (auto& t : threads) t.join();
  return status;
}

}  // namespace

TEST_CASE("a job that connects per run gets its partner's endpoints through rank 0", "[world][session]") {
  world::DriverOptions o{"test", 5s, 0};
  std::vector<world::Outcome> outs;
  const auto status = run_world(4, o, {}, [&](world::Leader& l) {
    outs.push_back(l.run(0, 1, {{"pairs", "0-1,2-3"}}));
    outs.push_back(l.run(1, 1, {{"pairs", "0-2"}}));
  });
  REQUIRE(outs.size() == 2);
  for (const auto& o1 : outs) {
    INFO(o1.error);
    REQUIRE(o1.ok);
  }
  CHECK(outs[0].ranks[0].record.u64("peer_qpn") == 101);
  CHECK(outs[0].ranks[1].record.u64("peer_qpn") == 100);
  CHECK(outs[0].ranks[2].record.u64("peer_qpn") == 103);
  CHECK(outs[0].ranks[3].record.u64("peer_qpn") == 102);
  CHECK(outs[1].ranks[0].record.u64("peer_qpn") == 102);
  CHECK(outs[1].ranks[2].record.u64("peer_qpn") == 100);
  CHECK(outs[1].ranks[1].record.u64("peer_qpn") == 0);  // in no pair: no endpoints
  CHECK(status == std::vector<int>{0, 0, 0, 0});
}

TEST_CASE("keep_going: a rank that died is lost and named, the others go on", "[world][session]") {
  world::DriverOptions o{"test", 2s, 0};
  o.keep_going = true;
  std::vector<world::Outcome> outs;
  std::string lost;
  const auto status = run_world(4, o, {3}, [&](world::Leader& l) {
    outs.push_back(l.run(0, 1, {{"pairs", "0-3,1-2"}}));
    outs.push_back(l.run(1, 1, {{"pairs", "0-1"}}));
    lost = l.lost(3);
  });
  REQUIRE(outs.size() == 2);
  CHECK(outs[0].ok);
  CHECK(outs[0].ranks[3].lost);
  CHECK_THAT(outs[0].ranks[3].error, Catch::Contains("rank 3"));
  CHECK(outs[0].ranks[0].record.u64("peer_qpn") == 0);  // its partner's endpoints never came
  CHECK(outs[0].ranks[1].record.u64("peer_qpn") == 102);
  CHECK(outs[1].ok);
  CHECK(outs[1].ranks[1].record.u64("peer_qpn") == 100);
  CHECK(outs[1].ranks[3].lost);
  CHECK_FALSE(lost.empty());
  CHECK(status[1] == 0);
  CHECK(status[2] == 0);
}

TEST_CASE("without keep_going a rank that died breaks the session", "[world][session]") {
  world::DriverOptions o{"test", 2s, 0};
  std::vector<world::Outcome> outs;
  bool broken = false;
  const auto status = run_world(3, o, {2}, [&](world::Leader& l) {
    outs.push_back(l.run(0, 1, {{"pairs", "0-1"}}));
    outs.push_back(l.run(1, 1, {{"pairs", "0-1"}}));
    broken = l.broken();
  });
  REQUIRE(outs.size() == 2);
  CHECK_FALSE(outs[0].ok);
  CHECK_THAT(outs[0].error, Catch::Contains("rank 2"));
  CHECK_FALSE(outs[1].ok);
  CHECK_THAT(outs[1].error, Catch::StartsWith("not run: "));
  CHECK(broken);
  CHECK(status[1] == 1);  // told by rank 0 to stop
}
