#include "fabench/pair/cm_link.hpp"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "fabench/base/error.hpp"
#include "fabench/verbs/error.hpp"

namespace fabench::pair {

namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// The private data of each connect request: which of the Side's QPs it is.
struct Hello {
  std::uint32_t magic;  // network order
  std::uint32_t qp;     // network order
};
constexpr std::uint32_t kMagic = 0x4642434dU;  // "FBCM"

bool is_ud(const Side& side) { return side.spec().transport == IBV_QPT_UD; }

// Reads and atomics in flight each way: what this end's options and device
// allow (RC only; 0 for UC and UD).
rdma_conn_param conn_param(const Side& side, const Hello& hello, std::uint8_t peer_initiator = 255,
                           std::uint8_t peer_responder = 255) {
  rdma_conn_param p{};
  p.private_data = &hello;
  p.private_data_len = sizeof hello;
  if (side.spec().transport == IBV_QPT_RC) {
    const auto& a = side.context().attributes();
    const unsigned want = side.options().max_rd_atomic;
    p.responder_resources = static_cast<std::uint8_t>(
        std::min({want, static_cast<unsigned>(a.max_qp_rd_atom), static_cast<unsigned>(peer_initiator)}));
    p.initiator_depth = static_cast<std::uint8_t>(
        std::min({want, static_cast<unsigned>(a.max_qp_init_rd_atom), static_cast<unsigned>(peer_responder)}));
  }
  p.retry_count = side.bundle().qp_config().retry_cnt;  // the same attributes as a QP connected by hand
  p.rnr_retry_count = side.bundle().qp_config().rnr_retry;
  return p;
}

// The id's QP, created for `side` on the id's device, which must be the Side's.
ibv_qp_cap create_qp(const Side& side, verbs::CmId& id, const std::string& where) {
  const std::string mine = side.context().device().name();
  if (id.device_name() != mine) {
    throw RunError(fmt::format("rdma_cm reached {} over {}, but this end uses {} (-d)", where,
                               id.device_name().empty() ? "no RDMA device" : id.device_name(), mine));
  }
  ibv_qp_init_attr attr = side.cm_qp_attr();
  id.create_qp(side.context().pd().get(), attr);
  if (side.spec().transport == IBV_QPT_RC) id.set_ack_timeout(side.bundle().qp_config().timeout);
  return attr.cap;
}

}  // namespace

sockaddr_storage socket_address(int fd, bool peer) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  const int rc = peer ? getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len)
                      : getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  if (rc != 0) {
    throw RunError(fmt::format("{} of the control connection: {}", peer ? "getpeername" : "getsockname",
                               verbs::error_text(errno)));
  }
  return verbs::unmap_ipv4(addr);
}

// ---------------------------------------------------------------- follower --

CmAcceptor::CmAcceptor(const Side& side, const sockaddr_storage& local)
    : channel_(std::make_unique<verbs::CmChannel>()),
      listener_(verbs::cm_listen(*channel_, verbs::with_port(local, 0), side.spec().transport,
                                 static_cast<int>(std::max<std::uint32_t>(side.spec().qps, 8)))),
      local_(local) {
  if (listener_.device_name().empty() || listener_.device_name() != side.context().device().name()) {
    throw RunError(fmt::format(
        "rdma_cm: {} (the address the client reached) belongs to {}, but this server uses {} (-d)",
        verbs::format_ip(local), listener_.device_name().empty() ? "no RDMA device" : listener_.device_name(),
        side.context().device().name()));
  }
}

CmConnection CmAcceptor::accept(const Side& side, milliseconds timeout) {
  const std::uint32_t n = side.spec().qps;
  const auto deadline = Clock::now() + timeout;
  CmConnection out;
  out.ids.resize(n);
  out.caps.resize(n);
  std::vector<bool> done(n, false);
  std::uint32_t complete = 0;
  const std::string where = verbs::format_sockaddr(verbs::with_port(local_, port()));
  while (complete < n) {
    verbs::CmEvent ev = channel_->next(
        deadline,
        fmt::format("waiting for the client's rdma_cm connections on {} ({} of {} connected)", where, complete, n));
    if (ev.type() == RDMA_CM_EVENT_CONNECT_REQUEST) {
      const auto& e = ev.get();
      const void* data = is_ud(side) ? e.param.ud.private_data : e.param.conn.private_data;
      const std::size_t len = is_ud(side) ? e.param.ud.private_data_len : e.param.conn.private_data_len;
      Hello hello{};
      if (data != nullptr && len >= sizeof hello) std::memcpy(&hello, data, sizeof hello);
      const std::uint32_t q = ntohl(hello.qp);
      const std::uint8_t peer_initiator = e.param.conn.initiator_depth;
      const std::uint8_t peer_responder = e.param.conn.responder_resources;
      verbs::CmId id(ev.id());
      ev = verbs::CmEvent{};  // acknowledged before the id can go (rdma_destroy_id waits for it)
      if (ntohl(hello.magic) != kMagic || q >= n || out.ids[q]) {
        rdma_reject(id.get(), nullptr, 0);
        throw RunError(fmt::format("rdma_cm: a connect request on {} for queue pair {} of {} {}", where, q, n,
                                   ntohl(hello.magic) != kMagic ? "not from a fabench client" : "again"));
      }
      out.caps[q] = create_qp(side, id, "the client");
      const Hello mine{htonl(kMagic), htonl(q)};
      rdma_conn_param p = conn_param(side, mine, peer_initiator, peer_responder);
      id.accept(p, fmt::format("queue pair {} on {}", q, where));
      out.ids[q] = std::move(id);
      if (is_ud(side)) {  // SIDR: no ESTABLISHED on this side
        done[q] = true;
        ++complete;
      }
    } else if (ev.type() == RDMA_CM_EVENT_ESTABLISHED) {
      const auto it = std::find_if(out.ids.begin(), out.ids.end(), [&](const auto& i) { return i.get() == ev.id(); });
      if (it == out.ids.end()) continue;
      const auto q = static_cast<std::size_t>(it - out.ids.begin());
      if (!done[q]) {
        done[q] = true;
        ++complete;
      }
    } else {
      throw RunError(fmt::format("rdma_cm on {}: {} while {} of {} queue pairs were connected", where, ev.describe(),
                                 complete, n));
    }
  }
  // The listener goes first: it must not outlive the channel its events use,
  // which now goes with the connection.
  listener_ = verbs::CmId{};
  out.channel = std::move(channel_);
  spdlog::debug("rdma_cm: accepted {} queue pairs on {}", n, where);
  return out;
}

// ------------------------------------------------------------------ leader --

CmConnection cm_connect(const Side& side, const sockaddr_storage& local, const sockaddr_storage& remote,
                        milliseconds timeout) {
  const std::uint32_t n = side.spec().qps;
  CmConnection out;
  out.channel = std::make_unique<verbs::CmChannel>();
  out.caps.resize(n);
  if (is_ud(side)) out.routes.resize(n);
  const std::string where = verbs::format_sockaddr(remote);
  for (std::uint32_t q = 0; q < n; ++q) {
    verbs::CmId id = verbs::cm_resolve(*out.channel, local, remote, side.spec().transport, timeout,
                                       side.spec().traffic_class);
    out.caps[q] = create_qp(side, id, where);
    const Hello hello{htonl(kMagic), htonl(q)};
    rdma_conn_param p = conn_param(side, hello);
    id.connect(p, fmt::format("queue pair {} to {}", q, where));
    const verbs::CmEvent ev = out.channel->next(
        Clock::now() + timeout, fmt::format("connecting queue pair {} to {} through rdma_cm", q, where));
    if (ev.id() != id.get() || ev.type() != RDMA_CM_EVENT_ESTABLISHED) {
      throw RunError(fmt::format("rdma_cm: connecting queue pair {} to {}: {}{}", q, where, ev.describe(),
                                 ev.type() == RDMA_CM_EVENT_REJECTED || ev.type() == RDMA_CM_EVENT_UNREACHABLE
                                     ? " (does the server serve -R? is its rdma_cm port reachable?)"
                                     : ""));
    }
    if (is_ud(side)) {
      const auto& ud = ev.get().param.ud;
      out.routes[q] = CmConnection::UdRoute{ud.ah_attr, ud.qp_num, ud.qkey};
    }
    out.ids.push_back(std::move(id));
  }
  spdlog::debug("rdma_cm: connected {} queue pairs to {}", n, where);
  return out;
}

}  // namespace fabench::pair
