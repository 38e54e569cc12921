// PairJob: one rank's part of fabench-accept's rounds, as a world::Job that
// connects anew for every run (world/driver.hpp). A round's pairs reach every
// rank as one parameter ("pairs": "0-3,1-2"); a rank in a pair builds a
// PairLink, offers its endpoints, connects to its partner's (handed over by
// rank 0 as an EndpointExchange) and measures its half (measure_pair); a rank
// in no pair idles through the round.
//
// A failure of its own (set-up, connect, a local verbs error) is the pair's
// result, not a failed run: the half sent to rank 0 is then
// {"failure": "<rank>: setup: ...", "stage": 0 set-up | 1 connect | 2 run},
// so that only that pair fails and the others go on. A half that measured is
// accept::attempt_to_json; a rank in no pair sends an empty document.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "fabench/accept/schedule.hpp"
#include "fabench/acceptbench/link.hpp"
#include "fabench/acceptbench/measure.hpp"
#include "fabench/ctrl/bootstrap.hpp"
#include "fabench/harness/context.hpp"
#include "fabench/world/driver.hpp"

namespace fabench::acceptbench {

struct RunSettings {
  LinkOptions link;
  PairPlan plan;
  double pair_s = 0;          // a pair's planned length (for the printed bound)
  double pair_timeout_s = 0;  // its hard limit, from the moment rank 0 says go
  double setup_s = 0;         // limit on each of a round's set-up answers (ready, connected)
};

class PairJob final : public world::Job {
 public:
  PairJob(ctrl::Bootstrap& boot, const harness::Context& ctx, const RunSettings& settings);

  // The run parameters of one round (rank 0).
  [[nodiscard]] static world::Params round_params(const std::vector<accept::Pair>& pairs);
  // The driver's options for fabench-accept: a lost rank costs only its pairs.
  [[nodiscard]] static world::DriverOptions driver_options(const RunSettings& settings);

  void prepare(std::size_t round, const world::Params& params) override;
  [[nodiscard]] bool connects_per_run() const override { return true; }
  [[nodiscard]] std::vector<verbs::Endpoint> endpoints() const override;
  [[nodiscard]] int connect_to(std::uint32_t rank) const override { return partner_.at(rank); }
  void connect(int rank, std::span<const verbs::Endpoint> remote) override;
  [[nodiscard]] world::RankReport run(std::uint64_t iterations, const world::Watch& watch) override;
  [[nodiscard]] std::string name(std::size_t round) const override;

 private:
  void set_failure(int stage, const std::string& text);

  ctrl::Bootstrap& boot_;
  const harness::Context& ctx_;
  const RunSettings& s_;
  std::vector<int> partner_;  // by rank, this round: its partner, -1 in no pair
  std::vector<int> side_;     // by rank, this round: 0 A, 1 B
  std::unique_ptr<PairLink> link_;
  std::string failure_;  // this rank's own failure this round ("" none)
  int stage_ = 0;
};

}  // namespace fabench::acceptbench
