#include "fabench/kv/plan.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "fabench/kv/error.hpp"

namespace fabench::kv {

namespace {

// The prefill rank decode rank j takes global head h from (layout.hpp, "Heads").
std::uint32_t source_rank(const KvSpec& s, std::uint32_t head, std::uint32_t decode_rank) {
  const std::uint64_t heads = s.model.cached_heads();
  const std::uint64_t tp = s.prefill_tp;
  if (heads >= tp) return static_cast<std::uint32_t>(head / (heads / tp));
  // Holders of h: ranks r with floor(r*H/tp) == h, i.e. [ceil(h*tp/H), ceil((h+1)*tp/H)).
  const std::uint64_t first = (head * tp + heads - 1) / heads;
  const std::uint64_t end = ((head + 1) * tp + heads - 1) / heads;
  return static_cast<std::uint32_t>(first + decode_rank % (end - first));
}

// Fuses pieces into WRs (plan.hpp) and hands each finished segment and WR to a sink.
template <class Sink>
class Merger {
 public:
  Merger(Sink& sink, const KvSpec& s) : sink_(sink), merge_(s.merge), max_sge_(s.max_sge), max_bytes_(s.max_wr_bytes) {}

  void add(std::uint64_t remote, std::uint64_t local, std::uint64_t len) {
    if (open_ && merge_ && remote == remote_ + length_ && length_ + len <= max_bytes_) {
      if (local == seg_offset_ + seg_length_) {
        seg_length_ += len;
        length_ += len;
        return;
      }
      if (segments_ < max_sge_) {
        sink_.segment(seg_offset_, seg_length_);
        seg_offset_ = local;
        seg_length_ = len;
        length_ += len;
        ++segments_;
        return;
      }
    }
    flush();
    open_ = true;
    remote_ = remote;
    length_ = len;
    seg_offset_ = local;
    seg_length_ = len;
    segments_ = 1;
  }

  void flush() {
    if (!open_) return;
    sink_.segment(seg_offset_, seg_length_);
    sink_.wr(remote_, length_, segments_);
    open_ = false;
  }

 private:
  Sink& sink_;
  bool merge_;
  std::uint32_t max_sge_;
  std::uint64_t max_bytes_;
  bool open_ = false;
  std::uint64_t remote_ = 0;
  std::uint64_t length_ = 0;
  std::uint64_t seg_offset_ = 0;
  std::uint64_t seg_length_ = 0;
  std::uint32_t segments_ = 0;
};

// Stores WRs and segments into a PairPlan.
struct PlanSink {
  PairPlan& plan;
  void segment(std::uint64_t offset, std::uint64_t length) { plan.segments.push_back({offset, length}); }
  void wr(std::uint64_t remote, std::uint64_t length, std::uint32_t count) {
    const std::size_t first = plan.segments.size() - count;
    if (first > UINT32_MAX || plan.wrs.size() >= UINT32_MAX) throw KvError("plan too large: over 2^32 WRs or SGEs");
    plan.wrs.push_back({remote, length, static_cast<std::uint32_t>(first), count});
    plan.bytes += length;
  }
};

// Counts them only.
struct CountSink {
  std::uint64_t wrs = 0;
  std::uint64_t segments = 0;
  std::uint64_t bytes = 0;
  void segment(std::uint64_t, std::uint64_t) { ++segments; }
  void wr(std::uint64_t, std::uint64_t length, std::uint32_t) {
    ++wrs;
    bytes += length;
  }
};

// One route's pieces, request by request, in remote-offset order.
class RouteWalker {
 public:
  RouteWalker(const KvSpec& s, const Route& r)
      : s_(s),
        prefill_(s, Side::kPrefill, r.prefill_rank),
        decode_(s, Side::kDecode, r.decode_rank),
        push_(s.direction == Direction::kPush),
        prefill_head_offset_((r.heads.first - prefill_.heads().first) * head_chunk_bytes(s)),
        decode_head_offset_((r.heads.first - decode_.heads().first) * head_chunk_bytes(s)),
        length_(r.heads.count * head_chunk_bytes(s)),
        order_(blocks_per_request(s)) {}

  template <class Sink>
  void walk(std::uint32_t request, Merger<Sink>& m) {
    const PoolMap& remote = push_ ? decode_ : prefill_;
    std::iota(order_.begin(), order_.end(), 0u);
    if (remote.layout() != Layout::kContiguous) {
      std::sort(order_.begin(), order_.end(), [&](std::uint32_t a, std::uint32_t b) {
        return remote.block_id(request, a) < remote.block_id(request, b);
      });
    }
    const std::uint32_t layers = s_.model.layers;
    const std::uint32_t tensors = s_.model.kv_tensors();
    if (s_.layout == Layout::kBlockMajor) {
      for (std::uint32_t b : order_) {
        for (std::uint32_t l = 0; l < layers; ++l) {
          for (std::uint32_t k = 0; k < tensors; ++k) piece(request, l, k, b, m);
        }
      }
    } else {
      for (std::uint32_t l = 0; l < layers; ++l) {
        for (std::uint32_t k = 0; k < tensors; ++k) {
          for (std::uint32_t b : order_) piece(request, l, k, b, m);
          // Layer-major's (layer, k) pools are separate tensors (vLLM): no WR crosses into the next,
          // even where this arena happens to put them back to back.
          if (s_.layout == Layout::kLayerMajor) m.flush();
        }
      }
    }
    m.flush();
  }

 private:
  template <class Sink>
  void piece(std::uint32_t request, std::uint32_t l, std::uint32_t k, std::uint32_t b, Merger<Sink>& m) const {
    const std::uint64_t p = prefill_.page_offset(request, l, k, b) + prefill_head_offset_;
    const std::uint64_t d = decode_.page_offset(request, l, k, b) + decode_head_offset_;
    if (push_) {
      m.add(d, p, length_);
    } else {
      m.add(p, d, length_);
    }
  }

  const KvSpec& s_;
  PoolMap prefill_;
  PoolMap decode_;
  bool push_;
  std::uint64_t prefill_head_offset_;
  std::uint64_t decode_head_offset_;
  std::uint64_t length_;
  std::vector<std::uint32_t> order_;
};

}  // namespace

std::vector<Route> routes(const KvSpec& s) {
  validate(s);
  std::vector<Route> out;
  for (std::uint32_t j = 0; j < s.decode_tp; ++j) {
    const HeadRange need = rank_heads(s, Side::kDecode, j);
    for (std::uint32_t h = need.first; h < need.first + need.count; ++h) {
      const std::uint32_t i = source_rank(s, h, j);
      if (!out.empty() && out.back().decode_rank == j && out.back().prefill_rank == i) {
        ++out.back().heads.count;
      } else {
        out.push_back({i, j, {h, 1}});
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const Route& a, const Route& b) {
    return a.prefill_rank != b.prefill_rank ? a.prefill_rank < b.prefill_rank : a.decode_rank < b.decode_rank;
  });
  return out;
}

std::vector<PairPlan> make_plans(const KvSpec& s) {
  std::vector<PairPlan> plans;
  for (const Route& r : routes(s)) {
    PairPlan& plan = plans.emplace_back();
    plan.prefill_rank = r.prefill_rank;
    plan.decode_rank = r.decode_rank;
    plan.direction = s.direction;
    plan.heads = r.heads;
    PlanSink sink{plan};
    Merger<PlanSink> merger(sink, s);
    RouteWalker walker(s, r);
    for (std::uint32_t q = 0; q < s.batch; ++q) {
      plan.request_first_wr.push_back(static_cast<std::uint32_t>(plan.wrs.size()));
      walker.walk(q, merger);
    }
    plan.request_first_wr.push_back(static_cast<std::uint32_t>(plan.wrs.size()));
  }
  return plans;
}

PlanStats plan_stats(const KvSpec& s) {
  PlanStats st;
  std::vector<std::uint64_t> sent(s.prefill_tp), received(s.decode_tp), posted(s.prefill_tp + s.decode_tp);
  for (const Route& r : routes(s)) {
    CountSink sink;
    Merger<CountSink> merger(sink, s);
    RouteWalker walker(s, r);
    for (std::uint32_t q = 0; q < s.batch; ++q) walker.walk(q, merger);
    st.wrs += sink.wrs;
    st.segments += sink.segments;
    st.bytes += sink.bytes;
    ++st.pairs;
    st.max_pair_wrs = std::max(st.max_pair_wrs, sink.wrs);
    sent[r.prefill_rank] += sink.bytes;
    received[r.decode_rank] += sink.bytes;
    posted[s.direction == Direction::kPush ? r.prefill_rank : s.prefill_tp + r.decode_rank] += sink.wrs;
  }
  st.max_poster_wrs = *std::max_element(posted.begin(), posted.end());
  st.max_rank_bytes = std::max(*std::max_element(sent.begin(), sent.end()),
                               *std::max_element(received.begin(), received.end()));
  return st;
}

double predict_seconds(std::uint64_t bytes, std::uint64_t wrs, double link_bytes_per_s, double per_wr_seconds) {
  const double wire = link_bytes_per_s > 0.0 ? static_cast<double>(bytes) / link_bytes_per_s : 0.0;
  return std::max(wire, static_cast<double>(wrs) * per_wr_seconds);
}

double predict_seconds(const PlanStats& st, double link_bytes_per_s, double per_wr_seconds) {
  return predict_seconds(st.max_rank_bytes, st.max_poster_wrs, link_bytes_per_s, per_wr_seconds);
}

}  // namespace fabench::kv
