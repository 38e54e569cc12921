// A congestor's flows (lib/congest/flows.hpp) back to back: each flow keeps `window_ops`
// operations of --congestor-size in flight until the phase's window has passed, then the rank
// drains what it posted. Sends land in receives posted with a buffer (an incast target reposts
// each as it completes); writes and reads need nothing from the peer. Contents are not checked:
// a congestor exists to load the fabric.
#include <algorithm>
#include <array>
#include <vector>

#include "fabench/harness/wait.hpp"
#include "wait.hpp"

namespace fabench::congestbench {

namespace {

constexpr std::int64_t kReceiverGraceMs = 250;

class Congestor {
 public:
  Congestor(const world::World& w, std::vector<congest::Flow> mine, std::uint64_t bytes, std::uint32_t window_ops,
            const world::Watch& watch)
      : w_(w), mine_(std::move(mine)), bytes_(bytes), window_(window_ops), waiter_(watch),
        in_flight_(mine_.size(), 0) {}

  // Keeps every flow full until the stop flag reads `seq` or `deadline_ns` passes, then drains;
  // false with r.error on a failure.
  bool run(const std::uint64_t* flag, std::uint64_t seq, std::uint64_t deadline_ns, PhaseResult& r) {
    while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) < seq && harness::coarse_now_ns() < deadline_ns) {
      for (std::size_t f = 0; f < mine_.size(); ++f) {
        while (in_flight_[f] < window_) {
          if (!post(f, r)) return false;
        }
      }
      const int n = poll(r);
      if (n < 0) {
        r.ok = false;
        return false;
      }
      // A rank without flows of its own (a put-incast target) waits for the window's end.
      if (n > 0 || mine_.empty()) waiter_.progress();
      if (n > 0) continue;
      const auto verdict = waiter_.idle();
      if (verdict != world::Waiter::Verdict::kGoOn) {
        detail::wait_failed(waiter_, verdict, r, "the congestors' completions");
        return false;
      }
    }
    return detail::wait_until(waiter_, r, "the congestor's operations", [&] { return outstanding_ == 0; },
                              [&] { return poll(r); });
  }

 private:
  bool post(std::size_t f, PhaseResult& r) {
    const congest::Flow& flow = mine_[f];
    ibv_sge sge = w_.arena().sge(Layout::kCongest, static_cast<std::uint32_t>(bytes_));
    ibv_send_wr wr{};
    wr.wr_id = f;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.send_flags = IBV_SEND_SIGNALED;
    if (flow.op == congest::FlowOp::kSend) {
      wr.opcode = IBV_WR_SEND;
    } else {
      wr.opcode = flow.op == congest::FlowOp::kWrite ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
      wr.wr.rdma.remote_addr = w_.remote(flow.peer).addr + Layout::kCongest + bytes_;
      wr.wr.rdma.rkey = w_.remote(flow.peer).rkey;
    }
    if (w_.qp(flow.peer).post_send(wr) != 0) [[unlikely]] {
      r.ok = false;
      r.error = fmt::format("ibv_post_send failed toward rank {}", flow.peer);
      return false;
    }
    ++in_flight_[f];
    ++outstanding_;
    return true;
  }

  // Sends' completions retire operations; receives (an incast target's) are reposted with a buffer.
  int poll(PhaseResult& r) {
    const int nr = w_.recv_cq().poll(wcs_);
    for (int i = 0; i < nr; ++i) {
      const auto peer = static_cast<std::uint32_t>(wcs_[i].wr_id);
      if (wcs_[i].status != IBV_WC_SUCCESS) [[unlikely]] {
        r.error = verbs::completion_error(wcs_[i], fmt::format("the QP from rank {}", peer)).what();
        return -1;
      }
      ibv_sge sge = w_.arena().sge(Layout::kCongest + bytes_, static_cast<std::uint32_t>(bytes_));
      ibv_recv_wr wr{};
      wr.wr_id = peer;
      wr.sg_list = &sge;
      wr.num_sge = 1;
      if (w_.qp(peer).post_recv(wr) != 0) [[unlikely]] {
        r.error = fmt::format("ibv_post_recv failed while reposting a receive for rank {}", peer);
        return -1;
      }
    }
    const int ns = w_.send_cq().poll(wcs_);
    for (int i = 0; i < ns; ++i) {
      const std::size_t f = wcs_[i].wr_id;
      if (wcs_[i].status != IBV_WC_SUCCESS) [[unlikely]] {
        r.error = verbs::completion_error(wcs_[i], fmt::format("the QP to rank {}", mine_[f].peer)).what();
        return -1;
      }
      --in_flight_[f];
      --outstanding_;
      ++r.ops;
      r.bytes += bytes_;
    }
    if (nr < 0 || ns < 0) [[unlikely]] {
      r.error = "ibv_poll_cq failed";
      return -1;
    }
    return nr + ns;
  }

  const world::World& w_;
  std::vector<congest::Flow> mine_;
  std::uint64_t bytes_;
  std::uint32_t window_;
  world::Waiter waiter_;
  std::vector<std::uint32_t> in_flight_;
  std::uint64_t outstanding_ = 0;
  std::array<ibv_wc, 32> wcs_{};
};

}  // namespace

PhaseResult run_congestor(const world::World& w, const std::vector<congest::Flow>& flows, std::uint64_t bytes,
                          std::uint32_t window_ops, const PhaseSpec& phase, const world::Watch& watch) {
  std::vector<congest::Flow> mine;
  for (const congest::Flow& f : flows) {
    if (f.initiator == w.rank()) mine.push_back(f);
  }
  // A rank that receives sends keeps reposting a while after the senders stop, so that no send
  // posted just before a sender stopped (the flag lands a little apart) meets no receive.
  const bool receiver = std::any_of(flows.begin(), flows.end(), [&](const congest::Flow& f) {
    return f.peer == w.rank() && f.op == congest::FlowOp::kSend;
  });
  Congestor c(w, std::move(mine), bytes, window_ops, watch);
  PhaseResult r;
  const std::uint64_t t0 = harness::now_ns();
  const auto* flag = reinterpret_cast<const std::uint64_t*>(w.arena().data() + phase.flag_offset);
  const auto window_ns = static_cast<std::uint64_t>(phase.window.count()) * 1'000'000ULL;
  if (c.run(flag, phase.seq, harness::coarse_now_ns() + window_ns, r) && receiver) {
    (void)c.run(flag, ~0ULL, harness::coarse_now_ns() + kReceiverGraceMs * 1'000'000ULL, r);
  }
  if (r.ok) r.seconds = static_cast<double>(harness::now_ns() - t0) / 1e9;
  return r;
}

}  // namespace fabench::congestbench
