// Endpoint: everything a peer needs to reach one of our queue pairs and the
// memory behind it. Plain data, no libibverbs types: it lives in lib/base so that
// verbs (which fills it) and ctrl (which carries it) both stand on it and
// neither sees the other (docs/ARCHITECTURE.md, the layers).
#pragma once

#include <array>
#include <cstdint>

namespace fabench {

struct Endpoint {
  std::uint32_t qpn = 0;               // queue pair number
  std::uint32_t psn = 0;               // initial packet sequence number (24 bits)
  std::uint32_t qkey = 0;              // UD only
  std::uint16_t lid = 0;               // InfiniBand LID (0 on RoCE)
  std::uint8_t port = 1;               // port number on the owning device
  std::uint8_t mtu = 0;                // enum ibv_mtu value of the active MTU (1..5)
  std::int32_t gid_index = -1;         // -1: no GID (IB without GRH)
  std::array<std::uint8_t, 16> gid{};  // raw GID (network byte order)
  std::uint64_t addr = 0;              // remote buffer virtual address
  std::uint32_t rkey = 0;              // remote key of that buffer
  std::uint64_t length = 0;            // buffer length in bytes

  friend bool operator==(const Endpoint&, const Endpoint&) = default;
};

}  // namespace fabench
