// One poll of a World's two CQs for the write-with-immediate protocols (fabench-coll's RDMA
// transport, fabench-ep's engine): the step both hot loops share.
#pragma once

#include <arpa/inet.h>

#include <cstdint>
#include <span>
#include <string>

#include <fmt/format.h>
#include <infiniband/verbs.h>

#include "fabench/verbs/error.hpp"
#include "fabench/world/world.hpp"

namespace fabench::world {

// Each receive completion (its wr_id is the sending peer's rank) is handed to
// `arrived(peer, imm)` (imm in host order) and its receive reposted on that peer's QP; each
// send completion retires one of `outstanding` writes, `send_peer(wc)` naming its peer should
// it fail. Returns the completions seen, or -1 with `error` set to the first failure (the
// failed completion's status, a failed repost, a failed poll).
template <typename Arrived, typename SendPeer>
[[gnu::always_inline]] inline int poll_world(const World& w, std::span<ibv_wc> wcs, std::uint64_t& outstanding,
                                             std::string& error, Arrived&& arrived, SendPeer&& send_peer) {
  const int nr = w.recv_cq().poll(wcs);
  for (int i = 0; i < nr; ++i) {
    const ibv_wc& wc = wcs[i];
    const auto peer = static_cast<std::uint32_t>(wc.wr_id);
    if (wc.status != IBV_WC_SUCCESS) [[unlikely]] {
      error = verbs::completion_error(wc, fmt::format("the QP from rank {}", peer)).what();
      return -1;
    }
    arrived(peer, ntohl(wc.imm_data));
    ibv_recv_wr wr{};
    wr.wr_id = peer;
    if (w.qp(peer).post_recv(wr) != 0) [[unlikely]] {
      error = fmt::format("ibv_post_recv failed while reposting a receive for rank {}", peer);
      return -1;
    }
  }
  const int ns = w.send_cq().poll(wcs);
  for (int i = 0; i < ns; ++i) {
    if (wcs[i].status != IBV_WC_SUCCESS) [[unlikely]] {
      error = verbs::completion_error(wcs[i], fmt::format("the QP to rank {}", send_peer(wcs[i]))).what();
      return -1;
    }
    --outstanding;
  }
  if (nr < 0 || ns < 0) [[unlikely]] {
    error = "ibv_poll_cq failed";
    return -1;
  }
  return nr + ns;
}

}  // namespace fabench::world
