// One rank's side of dispatch and combine, independent of how bytes move (the in-process
// simulation and fabench-ep's RDMA run share it): what it sends each destination, how it checks
// what a source sent and makes the combine reply, and how it checks the combined output.
// Ranks per node 1 (every copy goes straight to its expert's rank).
//
// Dispatch region a source writes at a destination (per source, sized region_bytes()):
//   normal       the copies, ascending token (count from the count round)
//   low-latency  u32 count per local expert of the destination, then the copies grouped by
//                local expert, ascending token within each
// Combine reply (per source, count x combine bytes): one bf16 vector per copy, in the order
// of the dispatch region: normal, the token's weighted partial over the destination's experts;
// low-latency, the expert's output y unweighted.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "fabench/ep/payload.hpp"
#include "fabench/ep/plan.hpp"

namespace fabench::ep {

class Exchange {
 public:
  Exchange(const EpConfig& c, const Placement& place, std::uint32_t self, Routing routing);

  [[nodiscard]] std::uint32_t self() const { return self_; }
  // Worst-case bytes of one source's dispatch region and combine reply (every token to this rank).
  [[nodiscard]] std::uint64_t dispatch_region_bytes() const;
  [[nodiscard]] std::uint64_t combine_region_bytes() const;

  // Copies this rank sends d (the count round's number) and the bytes they take (with the
  // low-latency header).
  [[nodiscard]] std::uint32_t copies_to(std::uint32_t d) const { return count_to_[d]; }
  [[nodiscard]] std::uint64_t dispatch_bytes_to(std::uint32_t d) const;
  [[nodiscard]] std::uint64_t combine_bytes_from(std::uint32_t d) const { return std::uint64_t{count_to_[d]} * c_.combine_bytes(); }
  // Writes them into out (dispatch_bytes_to(d) bytes).
  void pack_dispatch(std::uint32_t d, std::span<std::byte> out) const;

  // Checks the region source s wrote here (`copies` of them; low-latency reads its header
  // instead and ignores `copies`), runs the experts and writes the combine reply for s into
  // `reply`. Returns the copies that failed their check (0 when all are right); *replied is
  // set to the reply's bytes.
  std::uint64_t receive_dispatch(std::uint32_t s, std::span<const std::byte> region, std::uint32_t copies,
                                 std::span<std::byte> reply, std::uint64_t* replied) const;
  // Copies source s sent, as its low-latency header says (-1 when the header is not one).
  [[nodiscard]] std::int64_t low_latency_copies(std::span<const std::byte> region) const;

  // Combines the replies (reply_of(d) is what d wrote back here) and checks every token's
  // output bit for bit; returns the tokens that differ.
  template <class ReplyOf>
  std::uint64_t check_combine(ReplyOf reply_of) const;

 private:
  struct Slot {
    std::uint32_t rank = 0;
    std::uint32_t index = 0;  // in that rank's reply; kNone: a second expert on a rank (normal)
    float weight = 1.0f;
  };
  static constexpr std::uint32_t kNone = 0xffffffffu;
  void build_slots();
  [[nodiscard]] bool combine_token(std::uint32_t t, std::span<const std::span<const std::byte>> replies,
                                   std::vector<float>& acc, std::vector<std::uint16_t>& want,
                                   std::vector<std::uint16_t>& got) const;

  EpConfig c_;
  Placement place_;
  std::uint32_t self_;
  Routing routing_;
  std::vector<std::uint32_t> count_to_;  // per destination
  std::vector<Slot> slots_;              // tokens x top_k
  // Per destination, the (token, j) of every copy in region order.
  std::vector<std::vector<std::uint32_t>> order_;
};

template <class ReplyOf>
std::uint64_t Exchange::check_combine(ReplyOf reply_of) const {
  std::vector<std::span<const std::byte>> replies(c_.ranks);
  for (std::uint32_t d = 0; d < c_.ranks; ++d) replies[d] = reply_of(d);
  std::vector<float> acc(c_.shape.hidden);
  std::vector<std::uint16_t> want(c_.shape.hidden), got(c_.shape.hidden);
  std::uint64_t bad = 0;
  for (std::uint32_t t = 0; t < routing_.tokens; ++t) bad += combine_token(t, replies, acc, want, got) ? 0 : 1;
  return bad;
}

}  // namespace fabench::ep
