// -R: the QPs of a Side connected through rdma_cm, as perftest's -R does it,
// while the control connection still carries commands, endpoints (memory
// keys and addresses) and results.
//
//   leader (client)                          follower (server)
//   Command setup(spec, rdma_cm=1)    ->     Side; CmAcceptor listens on the
//                                            address the client reached
//                                     <-     Result ok, json {"cm_port": P}
//   per QP q: cm_connect: resolve the        accept: each request (private
//   server's address and route, QP on        data: q), QP on the request's id,
//   the id, connect (private data: q)        accept; wait until all are
//   until ESTABLISHED                        ESTABLISHED (UD: accepted)
//                                     <-     EndpointExchange (empty: failed)
//   EndpointExchange                  ->     ... then as without -R (peer.hpp)
//
// RC uses rdma_cm's TCP port space, UD its UDP one (SIDR; the client sends
// along the route rdma_cm resolved, the server along the client's exchanged
// endpoint), UC its IB port space (perftest 4.5 refuses UC with -R:
// librdmacm's rdma_create_id cannot ask for UC, rdma_create_ep can).
// Both ends build the Side on Context::rdma_cm(). Every wait is bounded by
// the timeout given.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>

#include <sys/socket.h>

#include "fabench/pair/side.hpp"
#include "fabench/verbs/cm.hpp"

namespace fabench::pair {

// The local (peer = false) or remote address of a connected socket, an
// IPv4-mapped IPv6 address as IPv4. Throws std::runtime_error.
[[nodiscard]] sockaddr_storage socket_address(int fd, bool peer);

class CmAcceptor {
 public:
  // Listens for `side`'s QPs on `local` (its port ignored: a free one).
  CmAcceptor(const Side& side, const sockaddr_storage& local);

  // The port it listens on (0 once accept() has returned: the listener is gone).
  [[nodiscard]] std::uint16_t port() const noexcept { return listener_.local_port(); }
  // Accepts the client's spec.qps connections, within `timeout` in all; the
  // connection takes the event channel.
  [[nodiscard]] CmConnection accept(const Side& side, std::chrono::milliseconds timeout);

 private:
  std::unique_ptr<verbs::CmChannel> channel_;
  verbs::CmId listener_;
  sockaddr_storage local_{};
};

// Connects `side`'s QPs, one rdma_cm connection each, from `local` to the
// server's `remote` (its port: the server's cm_port), within `timeout` each.
[[nodiscard]] CmConnection cm_connect(const Side& side, const sockaddr_storage& local, const sockaddr_storage& remote,
                                      std::chrono::milliseconds timeout);

}  // namespace fabench::pair
