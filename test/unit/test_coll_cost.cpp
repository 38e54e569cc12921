// The alpha-beta-gamma cost model against hand-computed values, and what `--algo auto` picks.
#include <catch2/catch.hpp>

#include <cstdint>
#include <stdexcept>

#include "fabench/base/error.hpp"
#include "fabench/coll/cost.hpp"

using namespace fabench::coll;

TEST_CASE("coll: cost model formulas, by hand: N = 4, S = 1000, a = 1, b = 0.01, g = 0.001", "[coll][cost]") {
  const CostParams p{1.0, 0.01, 0.001};
  // ring: 2*3*1 + 2*(3/4)*1000*0.01 + (3/4)*1000*0.001
  CHECK(predict_seconds(Collective::kAllReduce, Algorithm::kRing, 4, 1000, p) == Approx(21.75));
  // rhd: 2*2*1 + 15 + 0.75
  CHECK(predict_seconds(Collective::kAllReduce, Algorithm::kRecursiveHalvingDoubling, 4, 1000, p) == Approx(19.75));
  // oneshot: 1 + 3*1000*0.01 + 3*1000*0.001
  CHECK(predict_seconds(Collective::kAllReduce, Algorithm::kOneShot, 4, 1000, p) == Approx(34.0));
  // rd: 2*1 + 2*1000*0.01 + 2*1000*0.001
  CHECK(predict_seconds(Collective::kAllReduce, Algorithm::kRecursiveDoubling, 4, 1000, p) == Approx(24.0));
  CHECK(predict_seconds(Collective::kAllGather, Algorithm::kRing, 4, 1000, p) == Approx(3.0 + 7.5));
  CHECK(predict_seconds(Collective::kReduceScatter, Algorithm::kRing, 4, 1000, p) == Approx(3.0 + 7.5 + 0.75));
  CHECK(predict_seconds(Collective::kAllToAll, Algorithm::kPairwise, 4, 1000, p) == Approx(3.0 * (1.0 + 2.5)));
  CHECK(predict_seconds(Collective::kAllToAll, Algorithm::kAllAtOnce, 4, 1000, p) == Approx(1.0 + 7.5));
}

TEST_CASE("coll: rhd for a non-power of two pays the fold in and the result back", "[coll][cost]") {
  const CostParams p{1.0, 0.01, 0.001};
  // N = 6, p = 4: 4 + 15 + 0.75, plus 2 steps, 2 S b, S g = 2 + 20 + 1.
  CHECK(predict_seconds(Collective::kAllReduce, Algorithm::kRecursiveHalvingDoubling, 6, 1000, p) == Approx(42.75));
  // rd, N = 6: 2 + 20 + 2, and the same fold.
  CHECK(predict_seconds(Collective::kAllReduce, Algorithm::kRecursiveDoubling, 6, 1000, p) == Approx(47.0));
  // Any rank count ends (31 levels below 2^32 - 1): 31 + 31*1000*0.011, plus the fold 2 + 21.
  CHECK(predict_seconds(Collective::kAllReduce, Algorithm::kRecursiveDoubling, UINT32_MAX, 1000, p) ==
        Approx(31.0 + 341.0 + 23.0));
  CHECK(predict_seconds(Collective::kAllReduce, Algorithm::kRing, 1, 1000, p) == 0.0);
  CHECK_THROWS_AS(predict_seconds(Collective::kAllToAll, Algorithm::kRing, 4, 1000, p), fabench::UserError);
  CHECK_THROWS_AS(predict_seconds(Collective::kAllReduce, Algorithm::kRing, 0, 1000, p), fabench::UserError);
}

TEST_CASE("coll: auto picks one-shot for tiny, rd then rhd for mid-size and ring for huge all-reduces at N = 8",
          "[coll][cost]") {
  // 2 us per step, 25 GB/s links (200 Gb/s), reduction at 10 GB/s.
  const CostParams p{2e-6, 1.0 / 25e9, 1.0 / 10e9};
  CHECK(choose_auto(Collective::kAllReduce, 8, 8, p) == Algorithm::kOneShot);
  CHECK(choose_auto(Collective::kAllReduce, 8, 4096, p) == Algorithm::kOneShot);
  // 16 KiB: rd 6 + 6.9 us, rhd 12 + 2.6 us, one-shot 2 + 16.1 us.
  CHECK(choose_auto(Collective::kAllReduce, 8, 16 << 10, p) == Algorithm::kRecursiveDoubling);
  CHECK(choose_auto(Collective::kAllReduce, 8, 64 << 10, p) == Algorithm::kRecursiveHalvingDoubling);
  CHECK(choose_auto(Collective::kAllReduce, 8, 1ull << 30, p) == Algorithm::kRing);
  // At 1 GiB the model still has rhd ahead by 8 alphas; the ring wins the tie (cost.hpp says why).
  const double ring = predict_seconds(Collective::kAllReduce, Algorithm::kRing, 8, 1ull << 30, p);
  const double rhd = predict_seconds(Collective::kAllReduce, Algorithm::kRecursiveHalvingDoubling, 8, 1ull << 30, p);
  CHECK(ring - rhd == Approx(8 * 2e-6));
  CHECK(ring <= rhd * (1.0 + kAutoTieFraction));
  // Not a power of two: the ring is strictly cheaper at large sizes.
  CHECK(choose_auto(Collective::kAllReduce, 6, 1ull << 30, p) == Algorithm::kRing);
  CHECK(predict_seconds(Collective::kAllReduce, Algorithm::kRing, 6, 1ull << 30, p) <
        predict_seconds(Collective::kAllReduce, Algorithm::kRecursiveHalvingDoubling, 6, 1ull << 30, p));
  // The only algorithm there is, and all-at-once for all-to-all (the model has no incast).
  CHECK(choose_auto(Collective::kAllGather, 8, 1 << 20, p) == Algorithm::kRing);
  CHECK(choose_auto(Collective::kAllToAll, 8, 1 << 20, p) == Algorithm::kAllAtOnce);
}
