// verbs::Bundle's pure parts: the capacities its QPs ask for (clamped to the device) and the
// layout of the QPs' regions in its buffer. What needs a device (creation, endpoints, connect)
// runs in the rxe tests of its users (bench_*, coll_*, kv_*, accept_*).
#include <catch2/catch.hpp>

#include "fabench/verbs/bundle.hpp"

using namespace fabench::verbs;

TEST_CASE("bundle_caps clamps inline data and send SGEs to the device", "[verbs][bundle]") {
  BundleSpec spec;
  spec.caps.max_send_wr = 32;
  spec.caps.max_recv_wr = 8;
  spec.caps.max_inline_data = 220;
  spec.caps.max_send_sge = 4;
  const QpCaps c = bundle_caps(spec, 64, 30);
  CHECK(c.max_send_wr == 32);
  CHECK(c.max_recv_wr == 8);
  CHECK(c.max_recv_sge == 1);
  CHECK(c.max_inline_data == 64);
  CHECK(c.max_send_sge == 4);
  CHECK(bundle_caps(spec, 512, 2).max_inline_data == 220);
  CHECK(bundle_caps(spec, 512, 2).max_send_sge == 2);
  spec.caps.max_send_sge = 0;  // at least one gather entry
  CHECK(bundle_caps(spec, 0, 30).max_send_sge == 1);
  CHECK(bundle_caps(spec, 0, 30).max_inline_data == 0);
}

TEST_CASE("bundle regions: one per QP, or the whole buffer for every QP", "[verbs][bundle]") {
  BundleSpec spec;
  spec.qps = 3;
  spec.buffer_bytes = 3 * 8192;
  spec.region_bytes = 8192;
  CHECK(region_offset(spec, 0) == 0);
  CHECK(region_offset(spec, 2) == 2 * 8192);
  CHECK(region_length(spec) == 8192);
  spec.region_bytes = 0;  // World, PairLink: every QP describes the whole arena
  spec.buffer_bytes = 1 << 20;
  CHECK(region_offset(spec, 2) == 0);
  CHECK(region_length(spec) == (1 << 20));
}

TEST_CASE("BundleSpec defaults are QpConfig's and QpCaps' defaults", "[verbs][bundle]") {
  const BundleSpec spec;
  CHECK(spec.transport == IBV_QPT_RC);
  CHECK(spec.qp.timeout == QpConfig{}.timeout);
  CHECK(spec.qp.retry_cnt == 7);
  CHECK(spec.qp.rnr_retry == 7);
  CHECK(spec.qp.min_rnr_timer == 12);
  CHECK(spec.caps.max_send_sge == 1);
  CHECK_FALSE(spec.adopt_qps);
}
