// The N-rank skeleton (world/job_app.hpp) without RDMA: --help's epilogue, a
// job that ends before the rendezvous (--plan), the exit status of its errors,
// and one rank on loopback going through set-up to rank 0's role.
#include <catch2/catch.hpp>

#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "fabench/base/error.hpp"
#include "fabench/world/job_app.hpp"

using namespace fabench;

namespace {

class NullJob final : public world::Job {
 public:
  void prepare(std::size_t /*bench*/, const world::Params& /*params*/) override {}
  [[nodiscard]] world::RankReport run(std::uint64_t /*iterations*/, const world::Watch& /*watch*/) override {
    return {};
  }
  [[nodiscard]] std::string name(std::size_t /*bench*/) const override { return "null"; }
};

class FakeApp final : public world::AppJob {
 public:
  explicit FakeApp(std::string prog, bool benchmark_flags = true)
      : prog_(std::move(prog)), benchmark_flags_(benchmark_flags) {}
  [[nodiscard]] Text text() const override { return {prog_, prog_ + ": a fake job", "the footer", benchmark_flags_}; }
  void add_options(CLI::App& app) override {
    harness::add_device_flags(app, dev_);
    world::add_rank_flags(app, ranks_);
  }
  [[nodiscard]] const harness::DeviceFlags& device() const override { return dev_; }
  [[nodiscard]] const world::RankFlags& ranks() const override { return ranks_; }
  [[nodiscard]] std::optional<int> before_launch(CLI::App& /*app*/) override {
    if (!error.empty()) throw UserError(error);
    return stop;
  }
  [[nodiscard]] std::string agreement() const override { return "null;"; }
  [[nodiscard]] bool uses_device() const override { return false; }
  [[nodiscard]] std::unique_ptr<world::Job> set_up(const world::Rank& rank) override {
    set_up_rank = static_cast<int>(rank.boot.rank());
    had_device = rank.ctx != nullptr;
    return std::make_unique<NullJob>();
  }
  [[nodiscard]] int lead(const world::Rank& rank, world::Leader& driver) override {
    led = rank.leader();
    driver_size = driver.size();
    driver.finish();
    return 5;
  }

  std::optional<int> stop;
  std::string error;
  int set_up_rank = -1;
  bool had_device = true;
  bool led = false;
  std::uint32_t driver_size = 0;

 private:
  std::string prog_;
  bool benchmark_flags_;
  harness::DeviceFlags dev_;
  world::RankFlags ranks_;
};

// args: argv, the program first.
int run(FakeApp& app, std::vector<std::string> args, std::string* out = nullptr, std::string* err = nullptr) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::ostringstream o;
  std::ostringstream e;
  auto* old_out = std::cout.rdbuf(o.rdbuf());
  auto* old_err = std::cerr.rdbuf(e.rdbuf());
  const int rc = world::job_main(static_cast<int>(args.size()), argv.data(), app);
  std::cout.rdbuf(old_out);
  std::cerr.rdbuf(old_err);
  if (out != nullptr) *out = o.str();
  if (err != nullptr) *err = e.str();
  return rc;
}

}  // namespace

TEST_CASE("job_main: --help ends with the footer, the Google Benchmark flags and the exit statuses",
          "[world][job_app]") {
  FakeApp with("fake-help-gb");
  std::string out;
  CHECK(run(with, {"fake", "--help"}, &out) == 0);
  CHECK(out.find("fake-help-gb: a fake job") != std::string::npos);
  CHECK(out.find("the footer") != std::string::npos);
  CHECK(out.find("Google Benchmark flags pass through on rank 0") != std::string::npos);
  CHECK(out.find("Exit status:") != std::string::npos);
  FakeApp without("fake-help-plain", false);
  CHECK(run(without, {"fake", "--help"}, &out) == 0);
  CHECK(out.find("Google Benchmark") == std::string::npos);
  CHECK(out.find("Exit status:") != std::string::npos);
}

TEST_CASE("job_main: before_launch ends the run before the rendezvous, its errors exit 2", "[world][job_app]") {
  FakeApp plan("fake-plan");
  plan.stop = 3;
  CHECK(run(plan, {"fake"}) == 3);
  CHECK(plan.set_up_rank == -1);
  FakeApp bad("fake-bad");
  bad.error = "--thing: no such thing";
  std::string err;
  CHECK(run(bad, {"fake"}, nullptr, &err) == 2);
  CHECK(err == "fake-bad: error: --thing: no such thing\n");
  CHECK(bad.set_up_rank == -1);
}

TEST_CASE("job_main: one rank is set up without a device and leads", "[world][job_app]") {
  FakeApp one("fake-one");
  CHECK(run(one, {"fake", "--rank", "0", "--world-size", "1", "--master-addr", "127.0.0.1", "--timeout", "5"}) == 5);
  CHECK(one.set_up_rank == 0);
  CHECK_FALSE(one.had_device);
  CHECK(one.led);
  CHECK(one.driver_size == 1);
}
