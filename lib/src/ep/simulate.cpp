#include "fabench/ep/simulate.hpp"

#include <memory>
#include <vector>

#include "fabench/ep/exchange.hpp"

namespace fabench::ep {

namespace {

using Bytes = std::vector<std::byte>;

// Rank d receives every source's region and replies (reply[s][d]: what d sends back to s).
void receive_all(const EpConfig& c, const std::vector<std::unique_ptr<Exchange>>& ex, const std::vector<std::vector<Bytes>>& sent,
                 std::vector<std::vector<Bytes>>& reply, SimResult& r) {
  for (std::uint32_t d = 0; d < c.ranks; ++d) {
    for (std::uint32_t s = 0; s < c.ranks; ++s) {
      const Bytes& region = sent[s][d];
      const std::uint32_t copies = ex[s]->copies_to(d);
      Bytes& out = reply[s][d];
      out.resize(ex[d]->combine_region_bytes());
      std::uint64_t replied = 0;
      r.bad_copies += ex[d]->receive_dispatch(s, region, copies, out, &replied);
      r.copies += copies;
      out.resize(replied);
      if (s != d && replied > 0) {
        r.combine_sent += replied;
        ++r.combine_wrs;
      }
    }
  }
}

}  // namespace

SimResult simulate(const EpConfig& c, const Router& router) {
  validate(c);
  SimResult r;
  std::vector<std::unique_ptr<Exchange>> ex;
  for (std::uint32_t s = 0; s < c.ranks; ++s) {
    ex.push_back(std::make_unique<Exchange>(c, router.placement(), s, router.route(s, c.tokens)));
  }
  std::vector<std::vector<Bytes>> sent(c.ranks, std::vector<Bytes>(c.ranks));
  for (std::uint32_t s = 0; s < c.ranks; ++s) {
    for (std::uint32_t d = 0; d < c.ranks; ++d) {
      sent[s][d].resize(ex[s]->dispatch_bytes_to(d));
      ex[s]->pack_dispatch(d, sent[s][d]);
      if (s == d) continue;
      r.dispatch_sent += sent[s][d].size();
      const bool payload = ex[s]->copies_to(d) > 0;
      r.dispatch_wrs += c.mode == Mode::kNormal ? 1 + (payload ? 1 : 0) : 1;
    }
  }
  std::vector<std::vector<Bytes>> reply(c.ranks, std::vector<Bytes>(c.ranks));
  receive_all(c, ex, sent, reply, r);
  for (std::uint32_t s = 0; s < c.ranks; ++s) {
    r.bad_tokens += ex[s]->check_combine([&](std::uint32_t d) { return std::span<const std::byte>(reply[s][d]); });
    r.tokens += c.tokens;
  }
  return r;
}

}  // namespace fabench::ep
