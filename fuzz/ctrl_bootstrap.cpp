// Bootstrap (ctrl/bootstrap.hpp) as rank k of a world, reading rank 0's byte
// stream: the rendezvous (Hello, host table), then four collectives chosen by
// the input (barrier, allgather, endpoint allgather, route), whose answers
// are Gather/Barrier/EndpointExchange frames and routed pieces packed in
// Gather data. Rank 0 is a thread of this process over TCP loopback
// (fake_root.hpp). Everything Bootstrap does either succeeds with one answer
// per rank or throws CtrlError; as the whole stream and then its end are
// there at once, no wait may time out.
//
// Input: byte 0 picks the world size (2..8), byte 1 our rank (1..size-1),
// bytes 2-5 the collectives (barrier, allgather, allgather_endpoints, route);
// the rest is what rank 0 sends.
#include <chrono>

#include "fabench/ctrl/bootstrap.hpp"
#include "fake_root.hpp"

using namespace fabench::ctrl;
using namespace std::chrono_literals;

namespace {

constexpr std::size_t kPrefix = 6;

void expected(const CtrlError& e) {
  using K = CtrlError::Kind;
  FUZZ_CHECK(e.kind() == K::kClosed || e.kind() == K::kMalformed || e.kind() == K::kVersion ||
             e.kind() == K::kProtocol || e.kind() == K::kPeerError || e.kind() == K::kConfig ||
             e.kind() == K::kAuth);  // a rank 0 whose Hello carries a token challenge
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < kPrefix || size > 16 * 1024) return 0;
  const auto cfg = fuzz::rank_config(data, std::vector<std::uint8_t>(data + kPrefix, data + size));
  try {
    Bootstrap b = Bootstrap::connect(cfg);
    FUZZ_CHECK(b.hosts().size() == cfg.size);
    for (std::uint32_t k = 0; k <= cfg.size; ++k) (void)b.describe_rank(k);
    for (std::size_t i = 2; i < kPrefix; ++i) {
      switch (data[i] % 4) {
        case 0: b.barrier(5s); break;
        case 1: {
          const std::vector<std::uint8_t> mine{static_cast<std::uint8_t>(cfg.rank), 0xAB, 0xCD};
          FUZZ_CHECK(b.allgather(mine, 5s).size() == cfg.size);
          break;
        }
        case 2: {
          fabench::Endpoint ep;
          ep.qpn = 0x100 + cfg.rank;
          FUZZ_CHECK(b.allgather_endpoints(std::span(&ep, 1), 5s).size() == cfg.size);
          break;
        }
        default: {
          std::vector<std::vector<std::uint8_t>> out(cfg.size);
          for (std::uint32_t r = 0; r < cfg.size; ++r) {
            if (r != cfg.rank) out[r].assign(r + 1, static_cast<std::uint8_t>(r));
          }
          FUZZ_CHECK(b.route(out, 5s).size() == cfg.size);
          break;
        }
      }
    }
  } catch (const CtrlError& e) {
    expected(e);
  }
  fuzz::root().settle();
  return 0;
}
