// Port: a snapshot of one port's attributes (ibv_query_port) in the terms a
// report needs: state, link layer, active MTU, active speed x width and the
// resulting link rate, LID. Plus the pure encode/decode functions behind it,
// which need no device and are unit-tested.
//
// Link rate numbers: port_rate_gbps() gives the *nominal* rate, lane rate x
// lanes, with the lane rates the kernel's sysfs `rate` file and ibv_devinfo
// print (SDR 2.5, DDR 5, QDR 10, FDR10 10, FDR 14, EDR 25, HDR 50, NDR 100,
// XDR 200 Gb/s): "4X EDR = 100 Gb/s" is what operators know and compare to.
// port_data_rate_gbps() gives the rate left after line coding (8b/10b for
// SDR..QDR, 64b/66b for FDR10..EDR, HDR and later already quoted as data
// rates), the true ceiling for payload-plus-headers bandwidth.
// Soft-RoCE (rxe) derives speed/width from its netdev; we report what the
// port says and do not second-guess it.
#pragma once

#include <cstdint>
#include <string>

#include <infiniband/verbs.h>

namespace fabench::verbs {

// IB encodings of ibv_port_attr::active_speed. XDR (256) does not fit the
// uint8_t field of rdma-core 44 (newer rdma-core adds active_speed_ex), so the
// functions below take a wider integer and handle it numerically.
inline constexpr std::uint32_t kSpeedSdr = 1;
inline constexpr std::uint32_t kSpeedDdr = 2;
inline constexpr std::uint32_t kSpeedQdr = 4;
inline constexpr std::uint32_t kSpeedFdr10 = 8;
inline constexpr std::uint32_t kSpeedFdr = 16;
inline constexpr std::uint32_t kSpeedEdr = 32;
inline constexpr std::uint32_t kSpeedHdr = 64;
inline constexpr std::uint32_t kSpeedNdr = 128;
inline constexpr std::uint32_t kSpeedXdr = 256;

// Nominal per-lane rate in Gb/s; 0 for an unknown encoding.
[[nodiscard]] double lane_rate_gbps(std::uint32_t active_speed);
// Per-lane rate after line coding; 0 for an unknown encoding.
[[nodiscard]] double lane_data_rate_gbps(std::uint32_t active_speed);
// Lanes of an ibv_port_attr::active_width encoding (1=1x 2=4x 4=8x 8=12x
// 16=2x); 0 for an unknown encoding.
[[nodiscard]] int width_lanes(std::uint8_t active_width);
// Nominal link rate (e.g. 4X EDR -> 100.0); 0 when either encoding is unknown.
[[nodiscard]] double port_rate_gbps(std::uint32_t active_speed, std::uint8_t active_width);
// Link rate after line coding (e.g. 4X EDR -> 100.0, 4X QDR -> 32.0).
[[nodiscard]] double port_data_rate_gbps(std::uint32_t active_speed, std::uint8_t active_width);

// "SDR", "EDR", ..., "speed 0x3" for unknown encodings.
[[nodiscard]] std::string speed_name(std::uint32_t active_speed);
// "1X", "4X", ..., "width 0x3" for unknown encodings.
[[nodiscard]] std::string width_name(std::uint8_t active_width);
// "ACTIVE", "DOWN", ...
[[nodiscard]] std::string port_state_name(ibv_port_state state);
// "InfiniBand", "Ethernet", "unspecified"
[[nodiscard]] std::string link_layer_name(std::uint8_t link_layer);
// 256..4096; 0 for an invalid enum.
[[nodiscard]] std::uint32_t mtu_bytes(ibv_mtu mtu);
// Largest ibv_mtu not above bytes (bytes < 256 -> IBV_MTU_256).
[[nodiscard]] ibv_mtu mtu_from_bytes(std::uint32_t bytes);

struct Port {
  std::uint8_t port_num = 1;
  ibv_port_state state = IBV_PORT_NOP;
  std::string state_name;
  std::uint8_t link_layer = IBV_LINK_LAYER_UNSPECIFIED;
  std::string link_layer_name;
  ibv_mtu active_mtu = IBV_MTU_1024;
  std::uint32_t active_mtu_bytes = 0;
  ibv_mtu max_mtu = IBV_MTU_1024;
  std::uint8_t active_speed = 0;
  std::uint8_t active_width = 0;
  std::string speed_name;     // "EDR"
  std::string width_name;     // "4X"
  double rate_gbps = 0;       // nominal, see above
  double data_rate_gbps = 0;  // after line coding
  std::uint16_t lid = 0;
  std::uint32_t max_msg_sz = 0;
  int gid_tbl_len = 0;

  [[nodiscard]] bool is_active() const noexcept { return state == IBV_PORT_ACTIVE; }
  [[nodiscard]] bool is_ethernet() const noexcept { return link_layer == IBV_LINK_LAYER_ETHERNET; }
  // Decodes an ibv_port_attr (pure; used by query_port and by tests).
  [[nodiscard]] static Port from_attr(std::uint8_t port_num, const ibv_port_attr& attr);
};

// Throws VerbsError (ibv_query_port) on failure.
[[nodiscard]] Port query_port(ibv_context* context, std::uint8_t port_num);

}  // namespace fabench::verbs
