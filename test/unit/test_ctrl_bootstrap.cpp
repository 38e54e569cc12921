// Bootstrap with every rank as a thread of this process, over loopback.
// (Separate processes, mpirun and fabench-launch: test/rxe/bootstrap_*.sh.)
#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "fabench/ctrl/bootstrap.hpp"
#include "ctrl_support.hpp"

using namespace fabench::ctrl;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

using fabench::test::unused_port;

BootstrapConfig config(std::uint32_t rank, std::uint32_t size, std::uint16_t port,
                       std::chrono::milliseconds timeout = 5s) {
  return fabench::test::loopback_config(rank, size, port, timeout);
}

// Runs `body` as rank r for every r in `ranks`, each on its own thread; returns
// each rank's error text ("" when it succeeded).
std::vector<std::string> run_ranks(const std::vector<std::uint32_t>& ranks,
                                   const std::function<void(std::uint32_t)>& body) {
  std::vector<std::string> errors(ranks.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    threads.emplace_back([&, i] {
      try {
        body(ranks[i]);
      } catch (const std::exception& e) {
        errors[i] = e.what();
        if (errors[i].empty()) errors[i] = "(empty error)";
      }
    });
  }
  for (auto& t : threads) t.join();
  return errors;
}

}  // namespace

TEST_CASE("a world of one needs no network", "[ctrl][bootstrap]") {
  auto b = Bootstrap::connect(config(0, 1, 1));
  b.barrier();
  const std::vector<std::uint8_t> mine = {1, 2, 3};
  const auto all = b.allgather(mine);
  REQUIRE(all.size() == 1);
  CHECK(all[0] == mine);
  CHECK(b.hosts() == std::vector<std::string>{"host-0"});
}

TEST_CASE("five ranks rendezvous, allgather and barrier", "[ctrl][bootstrap]") {
  const std::uint16_t port = unused_port();
  constexpr std::uint32_t kSize = 5;
  std::vector<std::vector<std::vector<std::uint8_t>>> gathered(kSize);
  std::vector<std::vector<std::vector<fabench::Endpoint>>> endpoints(kSize);
  std::vector<std::vector<std::string>> hosts(kSize);
  const auto errors = run_ranks({0, 1, 2, 3, 4}, [&](std::uint32_t r) {
    // Ranks start in reverse order: the others must wait for rank 0.
    std::this_thread::sleep_for(std::chrono::milliseconds(40 * (kSize - r)));
    auto b = Bootstrap::connect(config(r, kSize, port));
    hosts[r] = b.hosts();
    const std::vector<std::uint8_t> mine(r * 3, static_cast<std::uint8_t>(r));  // rank 0 sends nothing
    gathered[r] = b.allgather(mine);
    b.barrier();
    std::vector<fabench::Endpoint> eps(r + 1);
    for (std::uint32_t i = 0; i <= r; ++i) {
      eps[i].qpn = 1000 * r + i;
      eps[i].rkey = r;
    }
    endpoints[r] = b.allgather_endpoints(eps);
    for (int i = 0; i < 20; ++i) b.barrier();
  });
  for (std::uint32_t r = 0; r < kSize; ++r) {
    INFO("rank " << r);
    CHECK(errors[r].empty());
    CHECK(hosts[r] == std::vector<std::string>{"host-0", "host-1", "host-2", "host-3", "host-4"});
    REQUIRE(gathered[r].size() == kSize);
    REQUIRE(endpoints[r].size() == kSize);
    for (std::uint32_t k = 0; k < kSize; ++k) {
      CHECK(gathered[r][k] == std::vector<std::uint8_t>(k * 3, static_cast<std::uint8_t>(k)));
      REQUIRE(endpoints[r][k].size() == k + 1);
      CHECK(endpoints[r][k].back().qpn == 1000 * k + k);
      CHECK(endpoints[r][k].back().rkey == k);
    }
  }
}

TEST_CASE("a rank that never comes is named by rank 0 and by the others", "[ctrl][bootstrap]") {
  const std::uint16_t port = unused_port();
  const auto t0 = Clock::now();
  const auto errors = run_ranks({0, 1, 3}, [&](std::uint32_t r) {
    auto b = Bootstrap::connect(config(r, 4, port, 600ms));
    b.barrier();
  });
  const double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
  const std::string expected = "rendezvous timed out after 600 ms: rank 2 of 4 never connected to rank 0 (host-0 ";
  CHECK_THAT(errors[0], Catch::StartsWith(expected));
  CHECK_THAT(errors[1], Catch::StartsWith("rank 0 (host-0) reports: " + expected));
  CHECK_THAT(errors[2], Catch::StartsWith("rank 0 (host-0) reports: " + expected));
  CHECK(elapsed >= 0.55);
  CHECK(elapsed < 3.0);
}

TEST_CASE("a rank that dies after the rendezvous is named at the next barrier", "[ctrl][bootstrap]") {
  const std::uint16_t port = unused_port();
  const auto t0 = Clock::now();
  const auto errors = run_ranks({0, 1, 2, 3}, [&](std::uint32_t r) {
    auto b = Bootstrap::connect(config(r, 4, port, 10s));
    b.barrier();
    if (r == 2) return;  // leaves: its Bootstrap closes the connection
    b.barrier();
  });
  const double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
  CHECK(errors[2].empty());
  CHECK_THAT(errors[0], Catch::Matches(R"(peer rank 2 \(host-2 127\.0\.0\.1:\d+\) closed the connection during barrier 2)"));
  CHECK(errors[1] == "rank 0 (host-0) reports: " + errors[0]);
  CHECK(errors[3] == "rank 0 (host-0) reports: " + errors[0]);
  CHECK(elapsed < 5.0);  // found at once, not after the 10 s timeout
}

TEST_CASE("ranks report rank 0's death by name", "[ctrl][bootstrap]") {
  const std::uint16_t port = unused_port();
  const auto errors = run_ranks({0, 1, 2}, [&](std::uint32_t r) {
    auto b = Bootstrap::connect(config(r, 3, port, 10s));
    if (r == 0) return;
    b.barrier();
  });
  CHECK(errors[0].empty());
  CHECK_THAT(errors[1], Catch::Matches(R"(peer rank 0 \(host-0 127\.0\.0\.1:\d+\) closed the connection during barrier 1)"));
  CHECK_THAT(errors[2], Catch::Matches(R"(peer rank 0 \(host-0 127\.0\.0\.1:\d+\) closed the connection during barrier 1)"));
}

TEST_CASE("a silent rank is named when the barrier times out", "[ctrl][bootstrap]") {
  const std::uint16_t port = unused_port();
  const auto errors = run_ranks({0, 1, 2}, [&](std::uint32_t r) {
    auto b = Bootstrap::connect(config(r, 3, port, 2s));
    if (r == 1) {
      b.barrier(300ms);  // the barrier rank 2 never enters (it sleeps, connected)
      return;
    }
    if (r == 2) {
      std::this_thread::sleep_for(2500ms);
      return;
    }
    b.barrier(300ms);
  });
  CHECK_THAT(errors[0], Catch::Matches(R"(barrier 1 timed out after 300 ms: no word from peer rank 2 \(host-2 127\.0\.0\.1:\d+\))"));
  CHECK(errors[1] == "rank 0 (host-0) reports: " + errors[0]);
  CHECK(errors[2].empty());
}

TEST_CASE("mismatched worlds are refused in one line", "[ctrl][bootstrap]") {
  SECTION("different sizes") {
    const std::uint16_t port = unused_port();
    const auto errors = run_ranks({0, 1}, [&](std::uint32_t r) {
      auto c = config(r, r == 0 ? 2 : 3, port, 2s);
      auto b = Bootstrap::connect(c);
    });
    CHECK_THAT(errors[0], Catch::Contains("believes the world has 3 ranks, rank 0 has 2"));
    CHECK_THAT(errors[1], Catch::Contains("says it is rank 0 of 2, but this rank 1 expected rank 0 of 3"));
  }
  SECTION("two processes claim the same rank") {
    const std::uint16_t port = unused_port();
    const auto errors = run_ranks({0, 1, 1}, [&](std::uint32_t r) {
      auto b = Bootstrap::connect(config(r, 3, port, 2s));
    });
    CHECK_THAT(errors[0], Catch::Matches(R"(two processes claim rank 1: peer rank 1 \(host-1 127\.0\.0\.1:\d+\) and peer rank 1 \(host-1 127\.0\.0\.1:\d+\))"));
    CHECK_THAT(errors[1], Catch::StartsWith("rank 0 (host-0) reports: two processes claim rank 1"));
    CHECK_THAT(errors[2], Catch::StartsWith("rank 0 (host-0) reports: two processes claim rank 1"));
  }
}

TEST_CASE("rank 0 on a port in use says so", "[ctrl][bootstrap]") {
  auto holder = Listener::bind("", 0);
  const auto e = [&] {
    try {
      (void)Bootstrap::connect(config(0, 2, holder.port(), 1s));
    } catch (const CtrlError& err) {
      return std::string(err.what());
    }
    return std::string();
  }();
  CHECK_THAT(e, Catch::StartsWith("rank 0 cannot host the rendezvous: port " + std::to_string(holder.port()) +
                                  " already in use"));
}

TEST_CASE("a rank with no rank 0 to reach gives up at the deadline", "[ctrl][bootstrap]") {
  const std::uint16_t port = unused_port();
  const auto t0 = Clock::now();
  const auto errors = run_ranks({1}, [&](std::uint32_t r) { auto b = Bootstrap::connect(config(r, 2, port, 400ms)); });
  CHECK_THAT(errors[0], Catch::StartsWith("rank 1 cannot reach rank 0 for the rendezvous: cannot connect to 127.0.0.1:" +
                                          std::to_string(port) + ": Connection refused; retried for 400 ms"));
  CHECK(std::chrono::duration<double>(Clock::now() - t0).count() < 3.0);
}

TEST_CASE("ranks calling different collectives are told so", "[ctrl][bootstrap]") {
  const std::uint16_t port = unused_port();
  const auto errors = run_ranks({0, 1, 2}, [&](std::uint32_t r) {
    auto b = Bootstrap::connect(config(r, 3, port, 2s));
    if (r == 1) {
      b.barrier();
    } else {
      const std::vector<std::uint8_t> mine = {1};
      (void)b.allgather(mine);
    }
  });
  CHECK_THAT(errors[0], Catch::Matches(R"(peer rank 1 \(host-1 127\.0\.0\.1:\d+\) sent Barrier during allgather 1)"));
  CHECK(errors[1] == "rank 0 (host-0) reports: " + errors[0]);
  CHECK(errors[2] == "rank 0 (host-0) reports: " + errors[0]);
}

TEST_CASE("route delivers each piece to its rank only", "[ctrl][bootstrap]") {
  const std::uint16_t port = unused_port();
  constexpr std::uint32_t kSize = 6;
  std::vector<std::vector<std::vector<std::uint8_t>>> got(kSize);
  const auto errors = run_ranks({0, 1, 2, 3, 4, 5}, [&](std::uint32_t r) {
    auto b = Bootstrap::connect(config(r, kSize, port));
    // Rank r writes to its ring neighbours only: (r+1) gets {r, 1}, (r-1) gets {r, 2, 2}.
    std::vector<std::vector<std::uint8_t>> out(kSize);
    out[(r + 1) % kSize] = {static_cast<std::uint8_t>(r), 1};
    out[(r + kSize - 1) % kSize] = {static_cast<std::uint8_t>(r), 2, 2};
    got[r] = b.route(out);
    b.barrier();  // collectives stay in step after a route
  });
  for (std::uint32_t r = 0; r < kSize; ++r) {
    INFO("rank " << r);
    CHECK(errors[r].empty());
    REQUIRE(got[r].size() == kSize);
    const std::uint32_t left = (r + kSize - 1) % kSize;
    const std::uint32_t right = (r + 1) % kSize;
    for (std::uint32_t k = 0; k < kSize; ++k) {
      if (k == left) {
        CHECK(got[r][k] == std::vector<std::uint8_t>{static_cast<std::uint8_t>(k), 1});
      } else if (k == right) {
        CHECK(got[r][k] == std::vector<std::uint8_t>{static_cast<std::uint8_t>(k), 2, 2});
      } else {
        CHECK(got[r][k].empty());
      }
    }
  }
}
