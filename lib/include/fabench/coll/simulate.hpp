// The in-memory executor: runs every rank's schedule of one call step by step in one process,
// with the execution model and hazard rules of coll/schedule.hpp, and checks the outputs.
//
// Per step k: (1) every rank's writes are posted: sources are read at this point (a snapshot,
// as a NIC reading them any time before completion would see, given rule C); (2) each rank's
// arrivals must match its expect_from exactly (as multisets of sender ranks), then they land;
// (3) every rank runs its ops in order. It stops at the first broken rule:
//   - a transfer or op out of its buffer's bounds, not aligned to the element size, zero bytes,
//     to the writing rank itself, writing input, or an op whose src and dst overlap (rule D);
//   - an arrival not expected, or an expected one that did not come;
//   - a byte landed on twice (rule A), landed on after its owner touched it (rule B), written
//     by an op in the step that sends it (rule C), or read before anything wrote it (rule D).
// Shadow state is one flag byte and one step number per output and scratch element.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "fabench/coll/reduce.hpp"
#include "fabench/coll/schedule.hpp"

namespace fabench::coll {

enum class SimData : std::uint8_t {
  kExact,   // coll/data.hpp's exact integers: outputs are checked against expected_output
  kRandom,  // fill_random: no expected output, only that all ranks agree bit for bit
};

struct RunConfig {
  DType dtype = DType::kF32;
  ReduceOp op = ReduceOp::kSum;
  SimData data = SimData::kExact;
  std::uint64_t seed = 1;
  bool keep_outputs = false;
};

struct SimConfig {
  Collective collective = Collective::kAllReduce;
  Algorithm algorithm = Algorithm::kRing;
  std::uint32_t nranks = 2;
  std::uint64_t count = 0;  // as a user gives it (full buffer elements)
  ScheduleOptions options;
  RunConfig run;
};

struct SimResult {
  std::string error;        // the first broken rule, with step and rank; empty if none
  std::uint64_t wrong = 0;  // kExact: output elements that differ from the expected, all ranks
  std::string first_wrong;  // rank, element, got and expected of the first wrong element
  bool identical = true;    // all-reduce, all-gather: every output equals rank 0's bit for bit
  std::uint64_t count = 0;  // the effective count
  std::size_t steps = 0;
  std::uint64_t wire_bytes = 0;                 // all ranks together
  std::vector<std::vector<std::byte>> outputs;  // per rank, with RunConfig::keep_outputs
  [[nodiscard]] bool ok() const { return error.empty() && wrong == 0 && identical; }
};

// Builds every rank's schedule (build_schedule may throw fabench::UserError) and runs them.
[[nodiscard]] SimResult simulate(const SimConfig& config);
// Runs schedules[r] as rank r. The schedules must describe one call (same collective, sizes,
// step count; dtype_bytes equal to config's dtype); if not, that is the error.
[[nodiscard]] SimResult run_schedules(std::span<const Schedule> schedules, const RunConfig& config);

}  // namespace fabench::coll
