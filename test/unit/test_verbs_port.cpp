// Port encodings: active_speed x active_width -> link rate, names, MTU.
#include <catch2/catch.hpp>

#include "fabench/verbs/port.hpp"

using namespace fabench::verbs;

TEST_CASE("port_rate_gbps: nominal rates as the kernel's sysfs rate file prints them", "[verbs][port]") {
  // active_width: 1=1X 2=4X 4=8X 8=12X 16=2X
  CHECK(port_rate_gbps(1, 1) == Approx(2.5));            // 1X SDR
  CHECK(port_rate_gbps(1, 2) == Approx(10.0));           // 4X SDR
  CHECK(port_rate_gbps(2, 2) == Approx(20.0));           // 4X DDR
  CHECK(port_rate_gbps(4, 2) == Approx(40.0));           // 4X QDR
  CHECK(port_rate_gbps(8, 2) == Approx(40.0));           // 4X FDR10
  CHECK(port_rate_gbps(16, 2) == Approx(56.0));          // 4X FDR
  CHECK(port_rate_gbps(32, 2) == Approx(100.0));         // 4X EDR
  CHECK(port_rate_gbps(32, 8) == Approx(300.0));         // 12X EDR
  CHECK(port_rate_gbps(64, 2) == Approx(200.0));         // 4X HDR
  CHECK(port_rate_gbps(64, 16) == Approx(100.0));        // 2X HDR (HDR100 splits)
  CHECK(port_rate_gbps(128, 2) == Approx(400.0));        // 4X NDR
  CHECK(port_rate_gbps(128, 4) == Approx(800.0));        // 8X NDR
  CHECK(port_rate_gbps(kSpeedXdr, 2) == Approx(800.0));  // 4X XDR (256 > uint8_t)
  CHECK(port_rate_gbps(128, 1) == Approx(100.0));        // 1X NDR
}

TEST_CASE("port_rate_gbps: unknown encodings give 0, not a guess", "[verbs][port]") {
  CHECK(port_rate_gbps(0, 2) == 0.0);
  CHECK(port_rate_gbps(3, 2) == 0.0);   // not a single bit
  CHECK(port_rate_gbps(32, 3) == 0.0);  // width 3 is no encoding
  CHECK(port_rate_gbps(512, 2) == 0.0);
  CHECK(width_lanes(32) == 0);
}

TEST_CASE("port_data_rate_gbps: rate after line coding", "[verbs][port]") {
  CHECK(port_data_rate_gbps(1, 2) == Approx(8.0));                       // 8b/10b
  CHECK(port_data_rate_gbps(4, 2) == Approx(32.0));                      // 4X QDR, 8b/10b
  CHECK(port_data_rate_gbps(8, 2) == Approx(40.0));                      // FDR10: 10.3125 GBd, 64b/66b
  CHECK(port_data_rate_gbps(16, 2) == Approx(54.545454).epsilon(1e-6));  // FDR 14.0625 * 64/66 * 4
  CHECK(port_data_rate_gbps(32, 2) == Approx(100.0));                    // EDR 25.78125 * 64/66 * 4
  CHECK(port_data_rate_gbps(64, 2) == Approx(200.0));
  CHECK(port_data_rate_gbps(128, 2) == Approx(400.0));
}

TEST_CASE("speed and width names", "[verbs][port]") {
  CHECK(speed_name(1) == "SDR");
  CHECK(speed_name(8) == "FDR10");
  CHECK(speed_name(16) == "FDR");
  CHECK(speed_name(32) == "EDR");
  CHECK(speed_name(64) == "HDR");
  CHECK(speed_name(128) == "NDR");
  CHECK(speed_name(256) == "XDR");
  CHECK(speed_name(3) == "speed 0x3");
  CHECK(width_name(1) == "1X");
  CHECK(width_name(2) == "4X");
  CHECK(width_name(4) == "8X");
  CHECK(width_name(8) == "12X");
  CHECK(width_name(16) == "2X");
  CHECK(width_name(3) == "width 0x3");
}

TEST_CASE("MTU encodings round-trip", "[verbs][port]") {
  CHECK(mtu_bytes(IBV_MTU_256) == 256);
  CHECK(mtu_bytes(IBV_MTU_4096) == 4096);
  CHECK(mtu_bytes(static_cast<ibv_mtu>(0)) == 0);
  CHECK(mtu_from_bytes(4096) == IBV_MTU_4096);
  CHECK(mtu_from_bytes(9000) == IBV_MTU_4096);
  CHECK(mtu_from_bytes(1500) == IBV_MTU_1024);  // RoCE on a 1500 B netdev
  CHECK(mtu_from_bytes(1024) == IBV_MTU_1024);
  CHECK(mtu_from_bytes(100) == IBV_MTU_256);
}

TEST_CASE("Port::from_attr decodes an ibv_port_attr", "[verbs][port]") {
  ibv_port_attr attr{};
  attr.state = IBV_PORT_ACTIVE;
  attr.link_layer = IBV_LINK_LAYER_ETHERNET;
  attr.active_mtu = IBV_MTU_1024;
  attr.max_mtu = IBV_MTU_4096;
  attr.active_speed = 32;
  attr.active_width = 2;
  attr.lid = 0;
  attr.max_msg_sz = 0x80000000U;
  const Port p = Port::from_attr(1, attr);
  CHECK(p.is_active());
  CHECK(p.is_ethernet());
  CHECK(p.state_name == "ACTIVE");
  CHECK(p.link_layer_name == "Ethernet");
  CHECK(p.active_mtu_bytes == 1024);
  CHECK(p.speed_name == "EDR");
  CHECK(p.width_name == "4X");
  CHECK(p.rate_gbps == Approx(100.0));
  CHECK(p.max_msg_sz == 0x80000000U);

  attr.state = IBV_PORT_DOWN;
  attr.link_layer = IBV_LINK_LAYER_INFINIBAND;
  const Port q = Port::from_attr(2, attr);
  CHECK_FALSE(q.is_active());
  CHECK(q.state_name == "DOWN");
  CHECK(q.link_layer_name == "InfiniBand");
  CHECK(q.port_num == 2);
}
