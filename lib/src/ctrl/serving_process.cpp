#include "fabench/ctrl/serving_process.hpp"

#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace fabench::ctrl {

namespace {
namespace spawn {  // a namespace of its own: one unity batch with channel.cpp

// Parent -> spawner, with the channel's socket as SCM_RIGHTS.
struct Handover {
  std::uint32_t has_rank = 0;
  std::uint32_t rank = 0;
  std::int64_t timeout_ms = 0;
  std::uint32_t max_payload_bytes = 0;
  std::uint32_t host_bytes = 0;
  char host[256] = {};
};

// Spawner -> parent, once the child is gone.
struct Report {
  std::int32_t kind = 0;
  std::int32_t code = 0;
  std::int32_t pid = -1;
};

std::string errno_text(int err) { return std::strerror(err); }

// Dies with the process that forked us; false when that one is gone already.
bool die_with_parent(pid_t parent) noexcept {
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return false;
  return ::getppid() == parent;
}

void flush_logs() noexcept {
  try {
    spdlog::apply_all([](const std::shared_ptr<spdlog::logger>& l) { l->flush(); });
  } catch (...) {
    // nothing left to tell
  }
  (void)std::fflush(nullptr);
}

// One Handover and room for one descriptor: the msghdr of either direction.
struct HandoverMessage {
  explicit HandoverMessage(Handover& h) noexcept : iov{&h, sizeof h} {
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
  }
  HandoverMessage(const HandoverMessage&) = delete;
  HandoverMessage& operator=(const HandoverMessage&) = delete;
  iovec iov;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
};

// Blocks for the next handover; -1 when the parent closed its end.
int receive_channel(int sock, Handover& h) noexcept {
  for (;;) {
    HandoverMessage m(h);
    const ssize_t n = ::recvmsg(sock, &m.msg, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR) continue;
    if (n != static_cast<ssize_t>(sizeof h)) return -1;
    const cmsghdr* c = CMSG_FIRSTHDR(&m.msg);
    if (c == nullptr || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) return -1;
    int fd = -1;
    std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
    return fd;
  }
}

[[noreturn]] void run_child(int fd, const Handover& h, const ServingProcess::Body& body) noexcept {
  int rc = 1;
  try {
    ChannelOptions o;
    o.timeout = std::chrono::milliseconds(h.timeout_ms);
    o.max_payload_bytes = h.max_payload_bytes;
    Channel ch(fd, o);
    ch.set_peer(h.has_rank != 0 ? std::optional<std::uint32_t>(h.rank) : std::nullopt,
                std::string(h.host, std::min<std::size_t>(h.host_bytes, sizeof h.host)));
    rc = body(ch);
  } catch (const std::exception& e) {
    spdlog::error("serving process {}: {}", ::getpid(), e.what());
  } catch (...) {
    spdlog::error("serving process {}: an unknown exception", ::getpid());
  }
  flush_logs();
  // Not exit(): the destructors and atexit handlers of what this process
  // copied from the server are the server's, not ours.
  ::_exit(rc);
}

Report wait_child(pid_t child) noexcept {
  Report r;
  r.pid = child;
  int status = 0;
  while (::waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) {
      r.kind = static_cast<std::int32_t>(ServingProcess::Outcome::Kind::kNotStarted);
      r.code = errno;
      return r;
    }
  }
  if (WIFSIGNALED(status)) {
    r.kind = static_cast<std::int32_t>(ServingProcess::Outcome::Kind::kSignaled);
    r.code = WTERMSIG(status);
  } else {
    r.kind = static_cast<std::int32_t>(ServingProcess::Outcome::Kind::kExited);
    r.code = WEXITSTATUS(status);
  }
  return r;
}

// The spawner: one thread, forever waiting for a channel, forking its child
// and reporting its end, until the parent closes the socketpair.
[[noreturn]] void run_spawner(int sock, const ServingProcess::Body& body) noexcept {
  const pid_t self = ::getpid();
  for (;;) {
    Handover h;
    const int fd = receive_channel(sock, h);
    if (fd < 0) ::_exit(0);
    const pid_t child = ::fork();
    if (child == 0) {
      ::close(sock);
      if (!die_with_parent(self)) ::_exit(1);
      run_child(fd, h, body);
    }
    Report r;
    if (child < 0) {
      r.kind = static_cast<std::int32_t>(ServingProcess::Outcome::Kind::kNotStarted);
      r.code = errno;
    }
    ::close(fd);
    if (child > 0) r = wait_child(child);
    while (::send(sock, &r, sizeof r, MSG_NOSIGNAL) < 0 && errno == EINTR) {
    }
  }
}

}  // namespace spawn
}  // namespace

std::string ServingProcess::Outcome::describe() const {
  switch (kind) {
    case Kind::kExited: return fmt::format("exited with status {}", code);
    case Kind::kSignaled: return fmt::format("was killed by signal {} ({})", code, ::strsignal(code));
    case Kind::kNotStarted: return fmt::format("could not be started: fork: {}", spawn::errno_text(code));
  }
  return "ended";
}

ServingProcess::ServingProcess(Body body) {
  int sv[2] = {-1, -1};
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    throw CtrlError(CtrlError::Kind::kNetwork, "socketpair for the serving process: " + spawn::errno_text(errno));
  }
  const pid_t parent = ::getpid();
  spawn::flush_logs();  // what is buffered is printed once, by us
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(sv[0]);
    ::close(sv[1]);
    throw CtrlError(CtrlError::Kind::kNetwork, "fork of the serving process: " + spawn::errno_text(err));
  }
  if (pid == 0) {
    ::close(sv[0]);
    if (!spawn::die_with_parent(parent)) ::_exit(0);
    spawn::run_spawner(sv[1], body);
  }
  ::close(sv[1]);
  socket_ = sv[0];
  spawner_ = pid;
}

ServingProcess::~ServingProcess() {
  ::close(socket_);  // the spawner's next receive ends it
  for (int i = 0; i < 200; ++i) {
    const pid_t r = ::waitpid(spawner_, nullptr, WNOHANG);
    if (r == spawner_ || (r < 0 && errno != EINTR)) return;
    ::usleep(10'000);
  }
  // Still waiting for a child (the server is going mid-serve): the child dies with it.
  spdlog::warn("serving process {} did not end within 2 s of the server's close; killed it", spawner_);
  (void)::kill(spawner_, SIGKILL);
  while (::waitpid(spawner_, nullptr, 0) < 0 && errno == EINTR) {
  }
}

ServingProcess::Outcome ServingProcess::serve(const Channel& ch) {
  auto gone = [this](const std::string& why) {
    int status = 0;
    std::string how;
    if (::waitpid(spawner_, &status, WNOHANG) == spawner_) {
      how = WIFSIGNALED(status)
                ? fmt::format(": killed by signal {} ({})", WTERMSIG(status), ::strsignal(WTERMSIG(status)))
                : fmt::format(": exited with status {}", WEXITSTATUS(status));
    }
    return CtrlError(CtrlError::Kind::kClosed,
                     fmt::format("the serving process (pid {}) is gone{} ({})", spawner_, how, why));
  };
  spawn::Handover h;
  h.has_rank = ch.peer_rank() ? 1 : 0;
  h.rank = ch.peer_rank().value_or(0);
  h.timeout_ms = ch.options().timeout.count();
  h.max_payload_bytes = ch.options().max_payload_bytes;
  h.host_bytes = static_cast<std::uint32_t>(std::min(ch.peer_host().size(), sizeof h.host));
  std::memcpy(h.host, ch.peer_host().data(), h.host_bytes);

  spawn::HandoverMessage m(h);
  cmsghdr* c = CMSG_FIRSTHDR(&m.msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  const int fd = ch.fd();
  std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  ssize_t sent = 0;
  while ((sent = ::sendmsg(socket_, &m.msg, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
  }
  if (sent != static_cast<ssize_t>(sizeof h)) throw gone(sent < 0 ? spawn::errno_text(errno) : "short send");

  // As long as the child serves: its own waits all have timeouts.
  for (;;) {
    pollfd p{socket_, POLLIN, 0};
    const int n = ::poll(&p, 1, 1000);
    if (n < 0 && errno != EINTR) throw gone("poll: " + spawn::errno_text(errno));
    if (n <= 0) continue;
    spawn::Report r;
    const ssize_t got = ::recv(socket_, &r, sizeof r, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got != static_cast<ssize_t>(sizeof r)) throw gone(got < 0 ? spawn::errno_text(errno) : "it closed its socket");
    Outcome out;
    out.kind = static_cast<Outcome::Kind>(r.kind);
    out.code = r.code;
    out.pid = r.pid;
    return out;
  }
}

}  // namespace fabench::ctrl
