// rdma_cm: event channel, events, ids, listen and resolve.
#include "fabench/verbs/cm.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "fabench/verbs/error.hpp"

namespace fabench::verbs {

namespace {

// librdmacm's calls return -1 and set errno.
void check_cm(int rc, std::string_view verb, std::string_view hint = {}) {
  if (rc != 0) {
    const int err = errno != 0 ? errno : EIO;
    throw VerbsError(std::string(verb), err, std::string(hint));
  }
}

socklen_t sockaddr_length(const sockaddr_storage& addr) noexcept {
  return addr.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
}

// A bound id of `type` (not yet listening or resolved) whose events go to
// `channel`. rdma_create_ep is librdmacm's one call that takes a QP type
// (UC needs it: rdma_create_id gives RC or UD only); with RAI_PASSIVE it
// binds without resolving, and the id is synchronous until migrated.
CmId bound_id(const CmChannel& channel, const sockaddr_storage& addr, ibv_qp_type type) {
  sockaddr_storage local = addr;
  rdma_addrinfo info{};
  info.ai_flags = RAI_PASSIVE;
  info.ai_family = local.ss_family;
  info.ai_qp_type = type;
  info.ai_port_space = cm_port_space(type);
  info.ai_src_len = sockaddr_length(local);
  info.ai_src_addr = reinterpret_cast<sockaddr*>(&local);
  rdma_cm_id* raw = nullptr;
  errno = 0;
  check_cm(rdma_create_ep(&raw, &info, nullptr, nullptr), "rdma_create_ep",
           fmt::format("bind {} for {}: does an RDMA device have this address?", format_sockaddr(addr),
                       type == IBV_QPT_UD ? "UD" : (type == IBV_QPT_UC ? "UC" : "RC")));
  CmId id(raw);
  errno = 0;
  check_cm(rdma_migrate_id(raw, channel.get()), "rdma_migrate_id");
  return id;
}

}  // namespace

ibv_context* cm_device_context(std::string_view name) {
  int n = 0;
  errno = 0;
  ibv_context** list = rdma_get_devices(&n);
  if (list == nullptr) {
    const int err = errno != 0 ? errno : ENODEV;
    throw VerbsError("rdma_get_devices", err, "librdmacm sees no RDMA device; is the rdma_ucm module loaded?");
  }
  ibv_context* found = nullptr;
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) {
    const std::string dev = ibv_get_device_name(list[i]->device);
    names.push_back(dev);
    if (dev == name) found = list[i];
  }
  rdma_free_devices(list);  // the contexts stay open: librdmacm keeps them for the process
  if (found == nullptr) {
    throw VerbsError("rdma_get_devices", ENODEV,
                     fmt::format("librdmacm has no device '{}' (it has: {})", name, fmt::join(names, ", ")));
  }
  return found;
}

rdma_port_space cm_port_space(ibv_qp_type type) noexcept {
  switch (type) {
    case IBV_QPT_UD: return RDMA_PS_UDP;
    case IBV_QPT_UC: return RDMA_PS_IB;
    default: return RDMA_PS_TCP;
  }
}

std::string format_sockaddr(const sockaddr_storage& addr) {
  char text[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(addr);
    inet_ntop(AF_INET, &in.sin_addr, text, sizeof text);
    return fmt::format("{}:{}", text, ntohs(in.sin_port));
  }
  if (addr.ss_family == AF_INET6) {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(addr);
    inet_ntop(AF_INET6, &in6.sin6_addr, text, sizeof text);
    std::string scope;
    char ifname[IF_NAMESIZE] = {};
    if (in6.sin6_scope_id != 0 && if_indextoname(in6.sin6_scope_id, ifname) != nullptr) {
      scope = fmt::format("%{}", ifname);
    }
    return fmt::format("[{}{}]:{}", text, scope, ntohs(in6.sin6_port));
  }
  return fmt::format("(address family {})", addr.ss_family);
}

std::string format_ip(const sockaddr_storage& addr) {
  std::string text = format_sockaddr(addr);
  const auto colon = text.rfind(':');
  if (colon != std::string::npos && (addr.ss_family == AF_INET || addr.ss_family == AF_INET6)) text.resize(colon);
  if (addr.ss_family == AF_INET6 && text.size() >= 2) text = text.substr(1, text.size() - 2);  // the brackets
  return text;
}

sockaddr_storage unmap_ipv4(const sockaddr_storage& addr) noexcept {
  if (addr.ss_family != AF_INET6) return addr;
  const auto& in6 = reinterpret_cast<const sockaddr_in6&>(addr);
  if (!IN6_IS_ADDR_V4MAPPED(&in6.sin6_addr)) return addr;
  sockaddr_storage out{};
  auto& in = reinterpret_cast<sockaddr_in&>(out);
  in.sin_family = AF_INET;
  in.sin_port = in6.sin6_port;
  std::memcpy(&in.sin_addr, in6.sin6_addr.s6_addr + 12, 4);
  return out;
}

sockaddr_storage with_port(const sockaddr_storage& addr, std::uint16_t port) noexcept {
  sockaddr_storage out = addr;
  if (out.ss_family == AF_INET) reinterpret_cast<sockaddr_in&>(out).sin_port = htons(port);
  if (out.ss_family == AF_INET6) reinterpret_cast<sockaddr_in6&>(out).sin6_port = htons(port);
  return out;
}

// ------------------------------------------------------------------- CmEvent

std::string CmEvent::describe() const {
  if (event_.get() == nullptr) return "no event";
  std::string text = rdma_event_str(event_.get()->event);
  if (event_.get()->status != 0) {
    // REJECTED carries the IB CM reject reason; the others a negated errno.
    text += event_.get()->event == RDMA_CM_EVENT_REJECTED
                ? fmt::format(" (reject reason {})", event_.get()->status)
                : fmt::format(" ({})", error_text(std::abs(event_.get()->status)));
  }
  return text;
}

// ----------------------------------------------------------------- CmChannel

CmChannel::CmChannel() {
  errno = 0;
  channel_ = Handle<rdma_event_channel>(check_ptr(rdma_create_event_channel(), "rdma_create_event_channel",
                                                  "is the rdma_ucm module loaded (/dev/infiniband/rdma_cm)?"));
  const int flags = fcntl(channel_.get()->fd, F_GETFL);
  if (flags < 0 || fcntl(channel_.get()->fd, F_SETFL, flags | O_NONBLOCK) != 0) {
    const int err = errno;
    throw VerbsError("fcntl(O_NONBLOCK) on the rdma_cm event channel", err);
  }
}

CmEvent CmChannel::next(std::chrono::steady_clock::time_point deadline, std::string_view what) const {
  for (;;) {
    rdma_cm_event* event = nullptr;
    errno = 0;
    if (rdma_get_cm_event(channel_.get(), &event) == 0) return CmEvent(event);
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) check_cm(-1, "rdma_get_cm_event");
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
                                                                            std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      throw VerbsError("rdma_get_cm_event", ETIMEDOUT, fmt::format("no rdma_cm event while {}", what));
    }
    pollfd p{channel_.get()->fd, POLLIN, 0};
    const int rc = poll(&p, 1, static_cast<int>(std::min<std::int64_t>(left.count() + 1, 60'000)));
    if (rc < 0 && errno != EINTR) check_cm(-1, "poll on the rdma_cm event channel");
  }
}

// ---------------------------------------------------------------------- CmId

std::string CmId::device_name() const {
  if (id_.get() == nullptr || id_.get()->verbs == nullptr) return "";
  return ibv_get_device_name(id_.get()->verbs->device);
}

std::uint16_t CmId::local_port() const noexcept {
  return id_.get() != nullptr ? ntohs(rdma_get_src_port(id_.get())) : 0;
}

ibv_qp* CmId::create_qp(ibv_pd* pd, ibv_qp_init_attr& attr) {
  errno = 0;
  check_cm(rdma_create_qp(id_.get(), pd, &attr), "rdma_create_qp",
           fmt::format("{} QP on {} with max_send_wr {}, max_recv_wr {}, max_inline_data {}",
                       attr.qp_type == IBV_QPT_UD ? "UD" : (attr.qp_type == IBV_QPT_UC ? "UC" : "RC"), device_name(),
                       attr.cap.max_send_wr, attr.cap.max_recv_wr, attr.cap.max_inline_data));
  return id_.get()->qp;
}

void CmId::set_ack_timeout(std::uint8_t timeout) {
  errno = 0;
  check_cm(rdma_set_option(id_.get(), RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &timeout, sizeof timeout),
           "rdma_set_option(ACK_TIMEOUT)");
}

void CmId::connect(rdma_conn_param& param, std::string_view what) {
  errno = 0;
  check_cm(rdma_connect(id_.get(), &param), "rdma_connect", what);
}

void CmId::accept(rdma_conn_param& param, std::string_view what) {
  errno = 0;
  check_cm(rdma_accept(id_.get(), &param), "rdma_accept", what);
}

void CmId::set_tos(std::uint8_t tos) {
  errno = 0;
  check_cm(rdma_set_option(id_.get(), RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, sizeof tos), "rdma_set_option(TOS)");
}

// --------------------------------------------------------- listen / resolve

CmId cm_listen(const CmChannel& channel, const sockaddr_storage& addr, ibv_qp_type type, int backlog) {
  CmId id = bound_id(channel, addr, type);
  errno = 0;
  check_cm(rdma_listen(id.get(), backlog), "rdma_listen", format_sockaddr(addr));
  return id;
}

CmId cm_resolve(const CmChannel& channel, const sockaddr_storage& source, const sockaddr_storage& destination,
                ibv_qp_type type, std::chrono::milliseconds timeout, std::uint8_t tos) {
  CmId id = bound_id(channel, with_port(source, 0), type);
  sockaddr_storage dst = destination;
  const std::string route = fmt::format("{} to {}", format_sockaddr(source), format_sockaddr(destination));
  // One step: start it, then its event (or its error event) within the timeout.
  const auto step = [&](rdma_cm_event_type want, std::string_view what) {
    const auto deadline = std::chrono::steady_clock::now() + timeout + std::chrono::milliseconds(500);
    const CmEvent ev = channel.next(deadline, fmt::format("{} {}", what, route));
    if (ev.id() != id.get() || ev.type() != want) {
      throw VerbsError("rdma_cm", EHOSTUNREACH, fmt::format("{} {}: {}", what, route, ev.describe()));
    }
  };
  errno = 0;
  check_cm(rdma_resolve_addr(id.get(), nullptr, reinterpret_cast<sockaddr*>(&dst), static_cast<int>(timeout.count())),
           "rdma_resolve_addr", route);
  step(RDMA_CM_EVENT_ADDR_RESOLVED, "resolving the address");
  if (tos != 0) id.set_tos(tos);
  errno = 0;
  check_cm(rdma_resolve_route(id.get(), static_cast<int>(timeout.count())), "rdma_resolve_route", route);
  step(RDMA_CM_EVENT_ROUTE_RESOLVED, "resolving the route");
  return id;
}

template <>
void HandleTraits<rdma_cm_event>::destroy(rdma_cm_event* event) noexcept {
  rdma_ack_cm_event(event);
}

template <>
void HandleTraits<rdma_event_channel>::destroy(rdma_event_channel* channel) noexcept {
  rdma_destroy_event_channel(channel);
}

template <>
void HandleTraits<rdma_cm_id>::destroy(rdma_cm_id* id) noexcept {
  if (id->qp != nullptr) rdma_destroy_qp(id);
  if (rdma_destroy_id(id) != 0) log_destroy_failure("rdma_destroy_id", errno);
}

}  // namespace fabench::verbs
