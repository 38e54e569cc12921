// Port attributes and the IB speed/width/MTU encodings.
#include "fabench/verbs/port.hpp"

#include <fmt/format.h>

#include "fabench/verbs/error.hpp"

namespace fabench::verbs {

double lane_rate_gbps(std::uint32_t active_speed) {
  switch (active_speed) {
    case kSpeedSdr: return 2.5;
    case kSpeedDdr: return 5.0;
    case kSpeedQdr: return 10.0;
    case kSpeedFdr10: return 10.0;
    case kSpeedFdr: return 14.0;
    case kSpeedEdr: return 25.0;
    case kSpeedHdr: return 50.0;
    case kSpeedNdr: return 100.0;
    case kSpeedXdr: return 200.0;
    default: return 0.0;
  }
}

double lane_data_rate_gbps(std::uint32_t active_speed) {
  switch (active_speed) {
    // 8b/10b line coding.
    case kSpeedSdr: return 2.0;
    case kSpeedDdr: return 4.0;
    case kSpeedQdr: return 8.0;
    // 64b/66b: signalling 10.3125 / 14.0625 / 25.78125 GBd.
    case kSpeedFdr10: return 10.3125 * 64.0 / 66.0;
    case kSpeedFdr: return 14.0625 * 64.0 / 66.0;
    case kSpeedEdr: return 25.78125 * 64.0 / 66.0;
    // PAM4 generations are specified by their data rate.
    case kSpeedHdr: return 50.0;
    case kSpeedNdr: return 100.0;
    case kSpeedXdr: return 200.0;
    default: return 0.0;
  }
}

int width_lanes(std::uint8_t active_width) {
  switch (active_width) {
    case 1: return 1;
    case 2: return 4;
    case 4: return 8;
    case 8: return 12;
    case 16: return 2;
    default: return 0;
  }
}

double port_rate_gbps(std::uint32_t active_speed, std::uint8_t active_width) {
  return lane_rate_gbps(active_speed) * width_lanes(active_width);
}

double port_data_rate_gbps(std::uint32_t active_speed, std::uint8_t active_width) {
  return lane_data_rate_gbps(active_speed) * width_lanes(active_width);
}

std::string speed_name(std::uint32_t active_speed) {
  switch (active_speed) {
    case kSpeedSdr: return "SDR";
    case kSpeedDdr: return "DDR";
    case kSpeedQdr: return "QDR";
    case kSpeedFdr10: return "FDR10";
    case kSpeedFdr: return "FDR";
    case kSpeedEdr: return "EDR";
    case kSpeedHdr: return "HDR";
    case kSpeedNdr: return "NDR";
    case kSpeedXdr: return "XDR";
    default: return fmt::format("speed {:#x}", active_speed);
  }
}

std::string width_name(std::uint8_t active_width) {
  const int lanes = width_lanes(active_width);
  if (lanes == 0) return fmt::format("width {:#x}", active_width);
  return fmt::format("{}X", lanes);
}

std::string port_state_name(ibv_port_state state) {
  switch (state) {
    case IBV_PORT_NOP: return "NOP";
    case IBV_PORT_DOWN: return "DOWN";
    case IBV_PORT_INIT: return "INIT";
    case IBV_PORT_ARMED: return "ARMED";
    case IBV_PORT_ACTIVE: return "ACTIVE";
    case IBV_PORT_ACTIVE_DEFER: return "ACTIVE_DEFER";
  }
  return fmt::format("state {}", static_cast<int>(state));
}

std::string link_layer_name(std::uint8_t link_layer) {
  switch (link_layer) {
    case IBV_LINK_LAYER_INFINIBAND: return "InfiniBand";
    case IBV_LINK_LAYER_ETHERNET: return "Ethernet";
    // Old kernels report 0 for IB ports.
    case IBV_LINK_LAYER_UNSPECIFIED: return "unspecified";
    default: return fmt::format("link layer {}", link_layer);
  }
}

std::uint32_t mtu_bytes(ibv_mtu mtu) {
  switch (mtu) {
    case IBV_MTU_256: return 256;
    case IBV_MTU_512: return 512;
    case IBV_MTU_1024: return 1024;
    case IBV_MTU_2048: return 2048;
    case IBV_MTU_4096: return 4096;
  }
  return 0;
}

ibv_mtu mtu_from_bytes(std::uint32_t bytes) {
  if (bytes >= 4096) return IBV_MTU_4096;
  if (bytes >= 2048) return IBV_MTU_2048;
  if (bytes >= 1024) return IBV_MTU_1024;
  if (bytes >= 512) return IBV_MTU_512;
  return IBV_MTU_256;
}

Port Port::from_attr(std::uint8_t port_num, const ibv_port_attr& attr) {
  Port p;
  p.port_num = port_num;
  p.state = attr.state;
  p.state_name = port_state_name(attr.state);
  p.link_layer = attr.link_layer;
  p.link_layer_name = verbs::link_layer_name(attr.link_layer);
  p.active_mtu = attr.active_mtu;
  p.active_mtu_bytes = mtu_bytes(attr.active_mtu);
  p.max_mtu = attr.max_mtu;
  p.active_speed = attr.active_speed;
  p.active_width = attr.active_width;
  p.speed_name = verbs::speed_name(attr.active_speed);
  p.width_name = verbs::width_name(attr.active_width);
  p.rate_gbps = port_rate_gbps(attr.active_speed, attr.active_width);
  p.data_rate_gbps = port_data_rate_gbps(attr.active_speed, attr.active_width);
  p.lid = attr.lid;
  p.max_msg_sz = attr.max_msg_sz;
  p.gid_tbl_len = attr.gid_tbl_len;
  return p;
}

Port query_port(ibv_context* context, std::uint8_t port_num) {
  ibv_port_attr attr{};
  check_rc(ibv_query_port(context, port_num, &attr), "ibv_query_port",
           fmt::format("{} port {}", ibv_get_device_name(context->device), port_num));
  return Port::from_attr(port_num, attr);
}

}  // namespace fabench::verbs
