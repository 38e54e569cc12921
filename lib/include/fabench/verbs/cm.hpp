// rdma_cm (librdmacm) connection setup, as perftest's -R: CmChannel owns an
// event channel and waits on it with a deadline; CmEvent acknowledges its
// event when it goes; CmId owns one rdma_cm_id and the QP created on it
// (rdma_create_qp). cm_listen() and cm_resolve() make the passive and the
// active id of a connection for RC (port space TCP), UD (UDP) or UC (IB),
// their events on a CmChannel.
//
// QPs on a CmId are created on librdmacm's own ibv_context of the device
// (cm_device_context()), so everything they use (PD, CQs, MRs) must come
// from that context too (harness::Context::rdma_cm()).
//
// Every wait is bounded: address and route resolution by their timeout
// argument, connect/accept by CmChannel::next's deadline.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include <sys/socket.h>

#include "fabench/verbs/handle.hpp"
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

namespace fabench::verbs {

// librdmacm's opened context of the device named `name` (rdma_get_devices).
// Throws VerbsError, naming the devices librdmacm knows, when none matches.
[[nodiscard]] ibv_context* cm_device_context(std::string_view name);

// The port space rdma_cm uses for a QP type: RC TCP, UD UDP, UC IB.
[[nodiscard]] rdma_port_space cm_port_space(ibv_qp_type type) noexcept;

// "10.0.0.2:4791" or "[fe80::1%veth0]:4791"; format_ip: "10.0.0.2", "fe80::1%veth0".
[[nodiscard]] std::string format_sockaddr(const sockaddr_storage& addr);
[[nodiscard]] std::string format_ip(const sockaddr_storage& addr);
// An IPv4-mapped IPv6 address ("::ffff:10.0.0.2") as plain IPv4; others as they are.
[[nodiscard]] sockaddr_storage unmap_ipv4(const sockaddr_storage& addr) noexcept;
// `addr` with its port set to `port` (host order).
[[nodiscard]] sockaddr_storage with_port(const sockaddr_storage& addr, std::uint16_t port) noexcept;

template <>
void HandleTraits<rdma_cm_event>::destroy(rdma_cm_event* event) noexcept;
template <>
void HandleTraits<rdma_event_channel>::destroy(rdma_event_channel* channel) noexcept;
template <>
void HandleTraits<rdma_cm_id>::destroy(rdma_cm_id* id) noexcept;  // its QP first, when it has one

class CmEvent {
 public:
  CmEvent() = default;
  explicit CmEvent(rdma_cm_event* event) noexcept : event_(event) {}

  [[nodiscard]] const rdma_cm_event& get() const noexcept { return *event_.get(); }
  [[nodiscard]] rdma_cm_event_type type() const noexcept { return event_.get()->event; }
  [[nodiscard]] rdma_cm_id* id() const noexcept { return event_.get()->id; }
  // "RDMA_CM_EVENT_REJECTED (status 28)".
  [[nodiscard]] std::string describe() const;

 private:
  Handle<rdma_cm_event> event_;
};

class CmChannel {
 public:
  CmChannel();

  [[nodiscard]] rdma_event_channel* get() const noexcept { return channel_.get(); }
  // The next event on this channel; throws VerbsError ETIMEDOUT
  // ("no rdma_cm event ... while <what>") when none comes before `deadline`.
  [[nodiscard]] CmEvent next(std::chrono::steady_clock::time_point deadline, std::string_view what) const;

 private:
  Handle<rdma_event_channel> channel_;
};

class CmId {
 public:
  CmId() = default;
  explicit CmId(rdma_cm_id* id) noexcept : id_(id) {}

  [[nodiscard]] rdma_cm_id* get() const noexcept { return id_.get(); }
  [[nodiscard]] explicit operator bool() const noexcept { return id_.get() != nullptr; }
  [[nodiscard]] ibv_qp* qp() const noexcept { return id_.get() != nullptr ? id_.get()->qp : nullptr; }
  // The device the id is bound to ("" before it is).
  [[nodiscard]] std::string device_name() const;
  // The local port (host order): a listener's, after port 0 picked one.
  [[nodiscard]] std::uint16_t local_port() const noexcept;

  // rdma_create_qp on this id (its context must be the PD's): RC and UC
  // stay in INIT until connect/accept, UD goes to RTS. `attr.cap` is
  // updated with what the provider granted.
  ibv_qp* create_qp(ibv_pd* pd, ibv_qp_init_attr& attr);
  // rdma_set_option: the ACK timeout (4.096 us * 2^timeout, RC) and the type
  // of service (before route resolution) of this id's connection.
  void set_ack_timeout(std::uint8_t timeout);
  // rdma_connect (active) / rdma_accept (passive) with `param`; throws
  // VerbsError with `what` (which connection) as its hint.
  void connect(rdma_conn_param& param, std::string_view what);
  void accept(rdma_conn_param& param, std::string_view what);
  void set_tos(std::uint8_t tos);

 private:
  Handle<rdma_cm_id> id_;
};

// A passive id for QPs of `type`, bound to `addr` (port 0: a free one) and
// listening, its events (connect requests, and the events of the ids they
// bring) on `channel`. Throws VerbsError naming the address when no RDMA
// device has it.
[[nodiscard]] CmId cm_listen(const CmChannel& channel, const sockaddr_storage& addr, ibv_qp_type type,
                             int backlog = 64);

// An active id for a QP of `type`, bound to `source` (its port ignored) and
// resolved to `destination`: address, then route, each within `timeout`.
// Throws VerbsError naming both addresses when either fails or times out.
[[nodiscard]] CmId cm_resolve(const CmChannel& channel, const sockaddr_storage& source,
                              const sockaddr_storage& destination, ibv_qp_type type, std::chrono::milliseconds timeout,
                              std::uint8_t tos = 0);

}  // namespace fabench::verbs
