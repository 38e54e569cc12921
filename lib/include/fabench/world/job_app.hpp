// The one skeleton of every N-rank binary (fabench-coll, -kv, -ep, -accept).
// A binary is an AppJob: its flags, its set-up on a rank (the world::Job the
// session protocol runs, driver.hpp), and what rank 0 does with the driver.
// job_main() does the rest the same way for every binary:
//
//   main       logger named after the binary, CLI::App with its footer,
//              harness::parse_command_line (--help's epilogue), -v, run_main
//   launch     AppJob::before_launch (checks, --plan), world::connect_ranks,
//              AppJob::check_size, quiet followers (unless --print-all),
//              require_same_benchmarks, the device of this rank (context_for_rank)
//   set-up     AppJob::set_up(Rank): the job's session, its "world up" line;
//              it is dropped before the device, the device before the ranks
//   roles      ranks 1..N-1: world::follow; rank 0: AppJob::lead(Rank, Leader)
//
// BenchmarkJob is the AppJob whose rank 0 drives Google Benchmark: one
// benchmark per name, each one run of the driver per batch; a failed run is
// a skipped benchmark and exit status 1, with the one line that counts them.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "fabench/ctrl/bootstrap.hpp"
#include "fabench/harness/cli.hpp"
#include "fabench/harness/context.hpp"
#include "fabench/harness/report.hpp"
#include "fabench/world/driver.hpp"
#include "fabench/world/launch.hpp"

namespace fabench::world {

// What the skeleton hands a job once the ranks are connected.
struct Rank {
  ctrl::Bootstrap& boot;
  const harness::Context* ctx;  // this rank's device; nullptr when the job opens none
  std::chrono::milliseconds timeout;
  std::uint32_t spin_before_yield;  // --spin, else by cores per host (launch.hpp)
  std::uint8_t qp_timeout;          // -u

  [[nodiscard]] bool leader() const { return boot.rank() == 0; }
  // The device's name, or `none` without one ("shared memory").
  [[nodiscard]] std::string where(const std::string& none = "no device") const;
  // A job's session options with the three every session takes from the rank filled in.
  template <class Options>
  [[nodiscard]] Options session_options() const {
    Options o;
    o.timeout = timeout;
    o.spin_before_yield = spin_before_yield;
    o.qp_timeout = qp_timeout;
    return o;
  }
};

class AppJob {
 public:
  struct Text {
    std::string prog;         // "fabench-coll": the logger, error lines, driver messages
    std::string description;  // --help's first line
    std::string footer;
    bool benchmark_flags = true;  // --help names Google Benchmark's pass-through flags
  };

  AppJob() = default;
  AppJob(const AppJob&) = delete;
  AppJob& operator=(const AppJob&) = delete;
  virtual ~AppJob() = default;

  [[nodiscard]] virtual Text text() const = 0;
  // Its flags, the device and rank flags among them (device(), ranks()).
  virtual void add_options(CLI::App& app) = 0;
  [[nodiscard]] virtual const harness::DeviceFlags& device() const = 0;
  [[nodiscard]] virtual const RankFlags& ranks() const = 0;
  // After parsing, before the rendezvous: the benchmarks from the flags, and
  // the modes that need no ranks (--plan). A value ends the run with it.
  [[nodiscard]] virtual std::optional<int> before_launch(CLI::App& app) = 0;
  // Right after the rendezvous: UsageError when the launch does not fit.
  virtual void check_size(const ctrl::Bootstrap& /*boot*/) const {}
  // What every rank must agree on (require_same_benchmarks).
  [[nodiscard]] virtual std::string agreement() const = 0;
  [[nodiscard]] virtual bool uses_device() const { return true; }
  // Followers print nothing unless --print-all; true: they keep warnings.
  [[nodiscard]] virtual bool followers_warn() const { return false; }
  // This rank's part of the session (it logs its "world up" line). The
  // skeleton owns it, so that it goes before the device it was built on.
  [[nodiscard]] virtual std::unique_ptr<Job> set_up(const Rank& rank) = 0;
  // {prog, timeout, spin}; a job whose lost rank costs only itself says so.
  [[nodiscard]] virtual DriverOptions driver_options(const Rank& rank) const;
  // Rank 0 with the driver of the session. Returns the exit status.
  [[nodiscard]] virtual int lead(const Rank& rank, Leader& driver) = 0;
};

// main() of an N-rank binary (the steps above). Returns the exit status.
[[nodiscard]] int job_main(int argc, char** argv, AppJob& job);

// "rank R of N[ (ROLE)] on WHERE: world up (WHAT), K benchmark(s)[ to run]" on
// stderr: the line the rxe tests and the fault matrix wait for.
void log_world_up(const Rank& rank, const std::string& role, const std::string& where, const std::string& what,
                  const std::string& count);

class BenchmarkJob : public AppJob {
 public:
  // Every rank runs the same names() in the same order.
  [[nodiscard]] std::string agreement() const override;
  [[nodiscard]] int lead(const Rank& rank, Leader& driver) final;

 protected:
  // Rank 0, before the first benchmark: its context and the options of its report.
  virtual void begin(const Rank& rank) = 0;
  // The benchmarks in run order, and Google Benchmark's iteration policy.
  [[nodiscard]] virtual std::vector<std::string> names() const = 0;
  [[nodiscard]] virtual harness::Registration registration() const = 0;
  // One benchmark: its batches (batches()), then its counters (fail() on a check).
  virtual void bench(benchmark::State& state, std::size_t index, Leader& driver) = 0;
  // After the last benchmark, before the failure line (fabench-kv's knees).
  virtual void end() {}

  // One batch's Outcome (ok) read into the job's numbers: the batch's
  // seconds, or nullopt with `error` set (a rank's record that does not read).
  using Absorb = std::function<std::optional<double>(const Outcome& out, std::string& error)>;
  // Runs `index` in batches of state.max_iterations until Google Benchmark
  // has enough; false (counted, skipped with the error) when one failed.
  bool batches(benchmark::State& state, Leader& driver, std::size_t index, const Params& params, const Absorb& absorb);
  // A failed benchmark: counted, skipped with `error`.
  void fail(benchmark::State& state, const std::string& error);

 private:
  int failures_ = 0;
};

// A job's names(): its benchmarks' name() in run order.
template <class Bench>
[[nodiscard]] std::vector<std::string> names_of(const std::vector<Bench>& benches) {
  std::vector<std::string> out;
  out.reserve(benches.size());
  for (const auto& b : benches) out.push_back(b.name());
  return out;
}

namespace detail {
// add_options(app, c) of Cli's own namespace (found by argument-dependent lookup).
template <class Cli>
void add_cli_options(CLI::App& app, Cli& c) {
  add_options(app, c);
}
}  // namespace detail

// A job whose flags are one struct Cli, with `dev` (harness::DeviceFlags) and
// `ranks` (RankFlags) among them, added by add_options(CLI::App&, Cli&).
template <class Cli, class Base = BenchmarkJob>
class CliJob : public Base {
 public:
  void add_options(CLI::App& app) override { detail::add_cli_options(app, c_); }
  [[nodiscard]] const harness::DeviceFlags& device() const override { return c_.dev; }
  [[nodiscard]] const RankFlags& ranks() const override { return c_.ranks; }

 protected:
  Cli c_;
};

// A CliJob of Google Benchmark benchmarks whose Cli also has `iters` (-n) and `duration_s` (-D):
// the iteration policy from them.
template <class Cli>
class CliBenchmarkJob : public CliJob<Cli, BenchmarkJob> {
 protected:
  [[nodiscard]] harness::Registration registration() const override { return {this->c_.iters, this->c_.duration_s}; }
};

}  // namespace fabench::world
