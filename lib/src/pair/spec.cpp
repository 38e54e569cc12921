#include "fabench/pair/spec.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "fabench/base/error.hpp"
#include "fabench/base/text.hpp"
#include "fabench/harness/cli.hpp"
#include "fabench/pair/load.hpp"

namespace fabench::pair {

namespace {
constexpr std::array<std::pair<Op, std::string_view>, 5> kOps{{
    {Op::kWrite, "write"},
    {Op::kSend, "send"},
    {Op::kRead, "read"},
    {Op::kFetchAdd, "atomic_fadd"},
    {Op::kCompSwap, "atomic_cswap"},
}};

std::uint64_t round_up(std::uint64_t v, std::uint64_t to) { return (v + to - 1) / to * to; }

const std::string& text(const std::vector<std::pair<std::string, std::string>>& params, std::string_view key) {
  for (const auto& [k, v] : params) {
    if (k == key) return v;
  }
  throw UserError(fmt::format("parameter {} is missing", key));
}

template <typename T>
T number(const std::vector<std::pair<std::string, std::string>>& params, std::string_view key) {
  const std::string& v = text(params, key);
  const auto out = harness::parse_integer<T>(v);
  if (!out) throw UserError(fmt::format("parameter {}: '{}' is not a valid number", key, v));
  return *out;
}
}  // namespace

std::string_view op_name(Op op) noexcept {
  for (const auto& [o, n] : kOps) {
    if (o == op) return n;
  }
  return "?";
}

std::optional<Op> parse_op(std::string_view text_in) noexcept {
  const std::string t = to_lower(text_in);
  for (const auto& [o, n] : kOps) {
    if (t == n) return o;
  }
  if (t == "fadd" || t == "fetch_add") return Op::kFetchAdd;
  if (t == "cswap" || t == "cmp_swp" || t == "compare_swap") return Op::kCompSwap;
  return std::nullopt;
}

std::string_view transport_name(ibv_qp_type type) noexcept {
  switch (type) {
    case IBV_QPT_RC: return "rc";
    case IBV_QPT_UC: return "uc";
    case IBV_QPT_UD: return "ud";
    default: return "?";
  }
}

std::optional<ibv_qp_type> parse_transport(std::string_view text_in) noexcept {
  const std::string t = to_lower(text_in);
  if (t == "rc") return IBV_QPT_RC;
  if (t == "uc") return IBV_QPT_UC;
  if (t == "ud") return IBV_QPT_UD;
  return std::nullopt;
}

bool is_atomic(Op op) noexcept { return op == Op::kFetchAdd || op == Op::kCompSwap; }
bool reports_half_rtt(Op op) noexcept { return op == Op::kWrite || op == Op::kSend; }

TestSpec TestSpec::defaults(Kind kind) noexcept {
  TestSpec s;
  s.kind = kind;
  if (kind == Kind::kLatency) {
    s.tx_depth = 2;
    s.cq_mod = 1;
    s.msg_bytes = 2;
  } else {
    s.tx_depth = 128;
    s.cq_mod = 100;
    s.msg_bytes = 65536;
  }
  return s;
}

std::string TestSpec::name() const {
  std::string n = fmt::format("{}_{}/{}/{}", op_name(op),
                              kind == Kind::kLatency ? "lat" : (bidirectional ? "bibw" : "bw"),
                              transport_name(transport), msg_bytes);
  const TestSpec d = defaults(kind);
  if (qps != d.qps) n += fmt::format("/qps:{}", qps);
  if (kind == Kind::kBandwidth) {
    if (post_list != d.post_list) n += fmt::format("/post_list:{}", post_list);
    if (cq_mod != d.cq_mod) n += fmt::format("/cq_mod:{}", cq_mod);
  }
  if (tx_depth != d.tx_depth) n += fmt::format("/tx_depth:{}", tx_depth);
  if (inline_bytes != d.inline_bytes) n += fmt::format("/inline:{}", inline_bytes);
  if (events) n += "/events";
  if (reversed) n += "/reversed";
  if (rdma_cm) n += "/rdma_cm";
  if (load) n += "/" + load->name();
  return n;
}

std::string LoadSpec::name() const {
  std::string n = fmt::format("load:{}_{}", op_name(op), msg_bytes);
  if (qps != 1) n += fmt::format("_qps{}", qps);
  if (rate_bps != 0) n += "_rate" + format_bit_rate(rate_bps);
  if (bidirectional) n += "_bidir";
  return n;
}

std::vector<std::pair<std::string, std::string>> TestSpec::to_params() const {
  std::vector<std::pair<std::string, std::string>> p{
      {"kind", kind == Kind::kLatency ? "lat" : "bw"},
      {"op", std::string(op_name(op))},
      {"transport", std::string(transport_name(transport))},
      {"msg_bytes", std::to_string(msg_bytes)},
      {"qps", std::to_string(qps)},
      {"tx_depth", std::to_string(tx_depth)},
      {"rx_depth", std::to_string(rx_depth)},
      {"post_list", std::to_string(post_list)},
      {"cq_mod", std::to_string(cq_mod)},
      {"inline_bytes", std::to_string(inline_bytes)},
      {"bidirectional", bidirectional ? "1" : "0"},
      {"events", events ? "1" : "0"},
      {"mtu_bytes", std::to_string(mtu_bytes)},
      {"sl", std::to_string(sl)},
      {"traffic_class", std::to_string(traffic_class)},
  };
  // Only when set: a follower that knows no rdma_cm sees a plain spec (and
  // sends no cm_port, which the leader reports).
  if (rdma_cm) p.emplace_back("rdma_cm", "1");
  if (reversed) p.emplace_back("reversed", "1");
  if (load) {
    p.insert(p.end(), {
                          {"load_op", std::string(op_name(load->op))},
                          {"load_msg_bytes", std::to_string(load->msg_bytes)},
                          {"load_qps", std::to_string(load->qps)},
                          {"load_rate_bps", std::to_string(load->rate_bps)},
                          {"load_bidirectional", load->bidirectional ? "1" : "0"},
                      });
  }
  return p;
}

TestSpec TestSpec::from_params(const std::vector<std::pair<std::string, std::string>>& p) {
  TestSpec s;
  const auto& kind = text(p, "kind");
  if (kind != "lat" && kind != "bw") throw UserError(fmt::format("parameter kind: '{}' is not lat or bw", kind));
  s.kind = kind == "lat" ? Kind::kLatency : Kind::kBandwidth;
  auto op = parse_op(text(p, "op"));
  if (!op) throw UserError(fmt::format("parameter op: unknown operation '{}'", text(p, "op")));
  s.op = *op;
  auto tr = parse_transport(text(p, "transport"));
  if (!tr) throw UserError(fmt::format("parameter transport: unknown transport '{}'", text(p, "transport")));
  s.transport = *tr;
  s.msg_bytes = number<std::uint64_t>(p, "msg_bytes");
  s.qps = number<std::uint32_t>(p, "qps");
  s.tx_depth = number<std::uint32_t>(p, "tx_depth");
  s.rx_depth = number<std::uint32_t>(p, "rx_depth");
  s.post_list = number<std::uint32_t>(p, "post_list");
  s.cq_mod = number<std::uint32_t>(p, "cq_mod");
  s.inline_bytes = number<std::int32_t>(p, "inline_bytes");
  s.bidirectional = number<int>(p, "bidirectional") != 0;
  s.events = number<int>(p, "events") != 0;
  s.mtu_bytes = number<std::uint32_t>(p, "mtu_bytes");
  s.sl = number<std::uint8_t>(p, "sl");
  s.traffic_class = number<std::uint8_t>(p, "traffic_class");
  if (std::any_of(p.begin(), p.end(), [](const auto& kv) { return kv.first == "rdma_cm"; })) {
    s.rdma_cm = number<int>(p, "rdma_cm") != 0;
  }
  if (std::any_of(p.begin(), p.end(), [](const auto& kv) { return kv.first == "reversed"; })) {
    s.reversed = number<int>(p, "reversed") != 0;
  }
  const bool has_load = std::any_of(p.begin(), p.end(), [](const auto& kv) { return kv.first == "load_op"; });
  if (has_load) {
    LoadSpec l;
    auto lop = parse_op(text(p, "load_op"));
    if (!lop) throw UserError(fmt::format("parameter load_op: unknown operation '{}'", text(p, "load_op")));
    l.op = *lop;
    l.msg_bytes = number<std::uint64_t>(p, "load_msg_bytes");
    l.qps = number<std::uint32_t>(p, "load_qps");
    l.rate_bps = number<std::uint64_t>(p, "load_rate_bps");
    l.bidirectional = number<int>(p, "load_bidirectional") != 0;
    s.load = l;
  }
  return s;
}

TestSpec load_stream_spec(const TestSpec& latency) {
  const LoadSpec l = latency.load.value_or(LoadSpec{});
  TestSpec s = TestSpec::defaults(Kind::kBandwidth);
  s.op = l.op;
  s.transport = IBV_QPT_RC;
  s.msg_bytes = l.msg_bytes;
  s.qps = l.qps;
  s.bidirectional = l.bidirectional;
  // At most ~4 MiB in flight per QP (4 to 128 WRs): more than any link's
  // bandwidth-delay product, and a stop drains quickly.
  s.tx_depth = static_cast<std::uint32_t>(
      std::clamp<std::uint64_t>((4ULL << 20) / std::max<std::uint64_t>(l.msg_bytes, 1), 4, s.tx_depth));
  // One signalled WR per ~64 KiB (at most a quarter of the queue): the rate
  // is counted at completions, so coarse moderation (perftest's 100 WRs of
  // 64 KiB = 6.5 MB) would leave a short latency run without any.
  s.cq_mod = static_cast<std::uint32_t>(
      std::clamp<std::uint64_t>(65536 / std::max<std::uint64_t>(l.msg_bytes, 1), 1, s.tx_depth / 4));
  s.mtu_bytes = latency.mtu_bytes;
  s.sl = latency.sl;
  s.traffic_class = latency.traffic_class;
  return s;
}

std::uint64_t total_buffer_bytes(const TestSpec& spec) {
  const std::uint64_t own = spec.buffer_bytes();
  if (!spec.load) return own;
  const std::uint64_t load = load_stream_spec(spec).buffer_bytes();
  return own > std::numeric_limits<std::uint64_t>::max() - load ? std::numeric_limits<std::uint64_t>::max()
                                                                : own + load;
}

std::uint64_t TestSpec::slot_bytes() const noexcept {
  // UD receives carry the 40-byte GRH in front of the payload.
  const std::uint64_t payload = is_atomic(op) ? kAtomicBytes : msg_bytes;
  return round_up(payload + (transport == IBV_QPT_UD ? kGrhBytes : 0), 64);
}

std::uint64_t TestSpec::region_bytes() const noexcept { return round_up(2 * slot_bytes() + 64, 4096); }

int TestSpec::remote_access() const noexcept {
  switch (op) {
    case Op::kWrite: return IBV_ACCESS_REMOTE_WRITE;
    case Op::kRead: return IBV_ACCESS_REMOTE_READ;
    case Op::kFetchAdd:
    case Op::kCompSwap: return IBV_ACCESS_REMOTE_ATOMIC;
    case Op::kSend: return 0;
  }
  return 0;
}

namespace {
// A latency spec's load (validate's part for it).
std::string validate_load(const TestSpec& s) {
  const LoadSpec& l = *s.load;
  if (s.kind != Kind::kLatency) return "--load applies to latency benchmarks (fabench-lat)";
  if (l.op != Op::kWrite && l.op != Op::kRead) {
    return fmt::format("--load {}: the load is write or read (one-sided)", op_name(l.op));
  }
  if (l.qps == 0 || l.qps > kMaxLoadQps) return fmt::format("--load qps={}: must be from 1 to {}", l.qps, kMaxLoadQps);
  const std::string bad = validate(load_stream_spec(s));
  return bad.empty() ? bad : "--load: " + bad;
}
}  // namespace

std::string validate(const TestSpec& s) {
  std::string tr(transport_name(s.transport));  // "UD" in messages, as users type it
  for (auto& c : tr) c = (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
  if (s.transport != IBV_QPT_RC && s.transport != IBV_QPT_UC && s.transport != IBV_QPT_UD) {
    return "transport must be RC, UC or UD";
  }
  if (s.op == Op::kRead && s.transport != IBV_QPT_RC) {
    return fmt::format("read needs RC ({} has no RDMA read)", tr);
  }
  if (is_atomic(s.op) && s.transport != IBV_QPT_RC) {
    return fmt::format("{} needs RC ({} has no atomics)", op_name(s.op), tr);
  }
  if (s.op == Op::kWrite && s.transport == IBV_QPT_UD) return "write needs RC or UC (UD has no RDMA write)";
  if (is_atomic(s.op) && s.msg_bytes != kAtomicBytes) {
    return fmt::format("{} moves exactly 8 bytes (asked for -s {})", op_name(s.op), s.msg_bytes);
  }
  if (is_atomic(s.op) && s.kind == Kind::kBandwidth) return "atomics are measured by fabench-lat only";
  if (s.msg_bytes == 0) return "message size must be at least 1 byte";
  if (s.qps == 0) return "-q must be at least 1";
  if (s.tx_depth == 0) return "-t (tx depth) must be at least 1";
  if (s.post_list == 0) return "-l (post list) must be at least 1";
  if (s.cq_mod == 0) return "-Q (CQ moderation) must be at least 1";
  // With selective signaling a send queue holding only unsignaled WRs can
  // never be drained: a signaled WR must fit inside every window.
  if (s.cq_mod > s.tx_depth)
    return fmt::format("-Q {} exceeds -t {}: the send queue would fill with unsignaled WRs", s.cq_mod, s.tx_depth);
  if (s.post_list > s.tx_depth) return fmt::format("-l {} exceeds -t {}", s.post_list, s.tx_depth);
  // A window stops taking chains once fewer than post_list slots are free:
  // it must still hold a signaled WR then, or nothing ever completes.
  if (s.kind == Kind::kBandwidth && s.cq_mod + s.post_list - 1 > s.tx_depth) {
    return fmt::format("-Q {} with -l {} needs -t >= {} (a full send queue must hold a signaled WR)", s.cq_mod,
                       s.post_list, s.cq_mod + s.post_list - 1);
  }
  if (s.kind == Kind::kBandwidth && s.op == Op::kSend && s.rx_depth == 0) return "rx depth must be at least 1";
  if (s.kind == Kind::kLatency && s.qps != 1) return "latency runs on one queue pair (-q applies to bandwidth)";
  if (s.bidirectional && s.kind == Kind::kLatency) return "-b (bidirectional) applies to bandwidth only";
  if (s.events && s.kind == Kind::kLatency && s.op == Op::kWrite) {
    return "-e (event mode) does not apply to write latency, which polls memory, not a CQ";
  }
  if (s.transport == IBV_QPT_UD && s.mtu_bytes != 0 && s.msg_bytes > s.mtu_bytes) {
    return fmt::format("UD messages must fit in one MTU ({} B > MTU {} B)", s.msg_bytes, s.mtu_bytes);
  }
  // An SGE's length is 32 bits; the device's max_msg_sz is checked against the port later.
  if (s.msg_bytes > 0xffffffffULL)
    return fmt::format("message size {} B exceeds the 4 GiB - 1 an SGE can carry", s.msg_bytes);
  // A leader's spec reaches a server without the CLI's -q limit: buffer_bytes(), which the
  // server checks against --max-mem, must not wrap around 2^64 (found by fuzz/pair_spec).
  if (s.region_bytes() > std::numeric_limits<std::uint64_t>::max() / s.qps)
    return fmt::format("-q {} queue pairs of {} B exceed 2^64 bytes of buffers", s.qps, s.region_bytes());
  if (s.reversed && s.kind == Kind::kLatency) return "--reversed applies to bandwidth only";
  if (s.reversed && s.bidirectional) return "--reversed and -b contradict each other: -b already sends both ways";
  if (s.rdma_cm && s.load) return "--load with -R: the load's queue pairs connect without rdma_cm; drop one of them";
  if (s.load) return validate_load(s);
  return {};
}

}  // namespace fabench::pair
