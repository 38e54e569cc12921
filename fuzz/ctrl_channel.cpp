// Channel (ctrl/channel.hpp) reading a peer's byte stream over a socketpair:
// the input after its first byte is everything the peer sends before it
// closes. Each recv() returns a message or throws CtrlError; as all bytes and
// then the end of the stream are there at once, no wait may time out and the
// stream always ends in kClosed, kMalformed, kVersion, kProtocol or
// kPeerError. poll_incoming() never throws and never blocks.
//
// First byte: bits 0-4 pick the receiver's payload limit (1 B << n, at most
// 1 MiB here; the default 16 MiB only makes allocations slower), bit 7 starts
// with exchange_hello() as a handshake would.
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include "fabench/ctrl/channel.hpp"
#include "fuzz_common.hpp"

using namespace fabench::ctrl;
using namespace std::chrono_literals;

namespace {

bool write_all(int fd, const std::uint8_t* p, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

void expected(const CtrlError& e) {
  using K = CtrlError::Kind;
  FUZZ_CHECK(e.kind() == K::kClosed || e.kind() == K::kMalformed || e.kind() == K::kVersion ||
             e.kind() == K::kProtocol || e.kind() == K::kPeerError ||
             e.kind() == K::kAuth);  // a Hello with a token challenge (we hold no token)
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The whole stream must fit in the socket buffer: nobody reads the other end while we write.
  if (size < 1 || size > 64 * 1024) return 0;
  int sv[2];
  FUZZ_CHECK(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
  const int big = 1 << 20;
  (void)::setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
  (void)::setsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
  FUZZ_CHECK(write_all(sv[1], data + 1, size - 1));
  FUZZ_CHECK(::shutdown(sv[1], SHUT_WR) == 0);

  ChannelOptions options;
  options.timeout = 5s;
  options.max_payload_bytes = 1U << std::min(data[0] & 0x1F, 20);
  Channel ch(sv[0], options);
  ch.set_peer(1, "fuzz-peer");
  std::size_t messages = 0;
  try {
    if ((data[0] & 0x80) != 0) {
      const Hello h = ch.exchange_hello(Hello{kProtocolVersion, "0.1.0", "fuzz", 0, 2}, 5s);
      FUZZ_CHECK(h.protocol_version == kProtocolVersion);
      ++messages;
    }
    for (;;) {
      const auto incoming = ch.poll_incoming();
      const Message m = ch.recv(5s);
      FUZZ_CHECK(incoming == Channel::Incoming::kMessage);  // a whole frame was waiting
      FUZZ_CHECK(!std::holds_alternative<Keepalive>(m));
      FUZZ_CHECK(++messages <= size / kHeaderBytes);
    }
  } catch (const CtrlError& e) {
    expected(e);
  }
  ::close(sv[1]);
  return 0;
}
