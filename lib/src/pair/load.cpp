#include "fabench/pair/load.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <ctime>
#include <stdexcept>

#include <fmt/format.h>

#include "fabench/base/error.hpp"
#include "fabench/harness/cli.hpp"
#include "fabench/harness/loop.hpp"
#include "fabench/verbs/error.hpp"

namespace fabench::pair {

namespace {

using harness::now_ns;
using harness::UsageError;

using harness::kPollBatch;
using harness::kSignaled;
// What a paced load saves while held up, at least one message: a sleep that
// overslept (a coarse timer, a busy CPU: several ms in an emulated guest) is
// caught up within this much, so the offered rate holds on average. The send
// window (at most ~4 MiB per QP in flight) bounds the burst that follows.
constexpr std::uint64_t kBurstNs = 5'000'000;
// Waits for tokens longer than this sleep (most of) the rest instead of spinning.
constexpr std::uint64_t kSleepAboveNs = 200'000;

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// "qps=2" -> {"qps", "2"}; "bidir" -> {"bidir", ""}.
std::pair<std::string_view, std::string_view> key_value(std::string_view part) {
  const auto eq = part.find('=');
  if (eq == std::string_view::npos) return {part, {}};
  return {part.substr(0, eq), part.substr(eq + 1)};
}

void sleep_ns(std::uint64_t ns) noexcept {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(ns / 1'000'000'000ULL);
  ts.tv_nsec = static_cast<long>(ns % 1'000'000'000ULL);
  clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, nullptr);
}

}  // namespace

std::uint64_t parse_bit_rate(std::string_view text_in) {
  const std::string_view text = trim(text_in);
  const char* end = text.data() + text.size();
  double value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), end, value, std::chars_format::fixed);
  if (text.empty() || ec != std::errc{} || ptr == text.data()) {
    throw UserError(fmt::format("'{}' is not a rate (e.g. 2G, 800M, 2.5Gbps)", text));
  }
  std::string unit(ptr, end);
  for (auto& c : unit) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  if (unit.find("byte") != std::string::npos ||
      (!unit.empty() && std::string_view(ptr, end).find('B') != std::string_view::npos)) {
    throw UserError(fmt::format("'{}': the rate is in bits/s (2G = 2e9 bit/s), not bytes", text));
  }
  // Decimal prefixes: link rates are quoted in powers of ten.
  constexpr std::string_view kPrefixes = "kmgt";
  double mult = 1;
  std::string_view rest = unit;
  if (const auto i = rest.empty() ? std::string_view::npos : kPrefixes.find(rest.front());
      i != std::string_view::npos) {
    constexpr std::array<double, 4> kMultipliers{1e3, 1e6, 1e9, 1e12};
    mult = kMultipliers[i];
    rest.remove_prefix(1);
  }
  if (!rest.empty() && rest != "b" && rest != "bps" && rest != "bit" && rest != "bit/s" && rest != "b/s") {
    throw UserError(fmt::format("'{}': unknown unit '{}' (K, M, G or T, optionally bps)", text, unit));
  }
  const double bits = value * mult;
  if (!std::isfinite(bits) || bits > 1e18) throw UserError(fmt::format("'{}' is too large", text));
  if (bits < 0.5) throw UserError(fmt::format("'{}': the rate must be at least 1 bit/s", text));
  const auto out = static_cast<std::uint64_t>(std::llround(bits));
  if (out == 0) throw UserError(fmt::format("'{}': the rate must be at least 1 bit/s", text));
  return out;
}

std::string format_bit_rate(std::uint64_t bits_per_s) {
  constexpr std::array<std::pair<std::uint64_t, char>, 4> kUnits{
      {{1'000'000'000'000ULL, 'T'}, {1'000'000'000ULL, 'G'}, {1'000'000ULL, 'M'}, {1'000ULL, 'K'}}};
  for (const auto& [mult, unit] : kUnits) {
    if (bits_per_s >= mult && bits_per_s % mult == 0) return fmt::format("{}{}", bits_per_s / mult, unit);
  }
  return std::to_string(bits_per_s);
}

LoadSpec parse_load_spec(std::string_view text) {
  const auto bad = [&](std::string_view part, const std::string& why) {
    return UsageError(fmt::format("--load {}: {}: {}", text, part, why));
  };
  const std::vector<std::string> parts = harness::split_list(std::string(text));
  if (parts.size() < 2) {
    throw UsageError(fmt::format("--load {}: expected OP,SIZE[,qps=N][,rate=RATE][,bidir] (e.g. write,64K)", text));
  }
  LoadSpec l;
  const auto op = parse_op(trim(parts[0]));
  if (!op || (*op != Op::kWrite && *op != Op::kRead)) throw bad(parts[0], "the load's operation is write or read");
  l.op = *op;
  try {
    l.msg_bytes = harness::parse_bytes(std::string(trim(parts[1])));
  } catch (const std::invalid_argument& e) {
    throw bad(parts[1], e.what());
  }
  if (l.msg_bytes == 0) throw bad(parts[1], "the load's message size must be at least 1 byte");
  bool seen_qps = false;
  bool seen_rate = false;
  for (std::size_t i = 2; i < parts.size(); ++i) {
    const auto [key, value] = key_value(trim(parts[i]));
    if (key == "qps" && !seen_qps) {
      const auto n = harness::parse_integer<std::uint32_t>(value);
      if (!n || *n == 0 || *n > kMaxLoadQps) throw bad(parts[i], fmt::format("qps must be from 1 to {}", kMaxLoadQps));
      l.qps = *n;
      seen_qps = true;
    } else if (key == "rate" && !seen_rate) {
      try {
        l.rate_bps = parse_bit_rate(value);
      } catch (const std::invalid_argument& e) {
        throw bad(parts[i], e.what());
      }
      seen_rate = true;
    } else if (key == "bidir" && value.empty() && !l.bidirectional) {
      l.bidirectional = true;
    } else if (key == "qps" || key == "rate" || key == "bidir") {
      throw bad(parts[i], "given twice (or bidir with a value)");
    } else {
      throw bad(parts[i], "unknown option (qps=N, rate=RATE, bidir)");
    }
  }
  return l;
}

// ------------------------------------------------------------- the stream --

LoadStream::LoadStream(const harness::Context& ctx, const TestSpec& latency, const SideOptions& options, Role role)
    : side_(ctx, load_stream_spec(latency), options), load_(latency.load.value_or(LoadSpec{})), role_(role) {
  side_.fill_pattern(role == Role::kLeader ? kLeaderSeed : kFollowerSeed);
}

LoadStream::~LoadStream() {
  if (thread_.joinable()) {
    thread_.request_stop();
    thread_.join();
  }
}

std::string LoadStream::start(std::chrono::milliseconds stall) {
  if (!streams()) return {};
  bytes_done_.store(0, std::memory_order_relaxed);
  flowing_.store(false);
  ended_.store(false);
  result_ = LoadResult{};
  thread_ = std::jthread([this, stall](const std::stop_token& stop) { stream(stop, stall); });
  // The first completion says the load is on the wire; its thread's own
  // watchdog bounds the wait (a failure ends the thread).
  while (!flowing_.load() && !ended_.load()) std::this_thread::sleep_for(std::chrono::microseconds(50));
  if (flowing_.load()) return {};
  const LoadResult r = stop();
  return r.ok ? std::string("the load stopped before its first completion") : r.error;
}

LoadResult LoadStream::stop() {
  if (!thread_.joinable()) return {};
  thread_.request_stop();
  thread_.join();
  return result_;
}

// A load streams on all its QPs.
std::uint64_t LoadStream::check_payload() const { return pair::check_payload(side_, role_, ~0ULL); }

// The streaming loop: per QP one prebuilt WR (one SGE); only send_flags and
// the wr_id of signalled WRs change. A WR is signalled every cq_mod on its
// QP; its wr_id packs (qp << 32) | WRs it retires. The window per QP never
// exceeds tx_depth (cq_mod <= tx_depth / 4, so a full window holds a
// signalled WR). On stop, each QP's unsignalled tail is retired by one more
// signalled WR, and everything in flight is reaped, so the next run starts
// on empty queues.
void LoadStream::stream(const std::stop_token& stop, std::chrono::milliseconds stall) noexcept {
  const TestSpec& spec = side_.spec();
  const auto nq = static_cast<std::uint32_t>(side_.qps().size());
  const auto msg = static_cast<std::uint32_t>(spec.msg_bytes);
  const bool write = spec.op == Op::kWrite;
  const std::uint32_t base_flags = (write && msg <= side_.inline_threshold())
                                       ? static_cast<std::uint32_t>(IBV_SEND_INLINE)
                                       : 0U;
  std::array<ibv_sge, kMaxLoadQps> sges{};
  std::array<ibv_send_wr, kMaxLoadQps> wrs{};
  std::array<std::uint64_t, kMaxLoadQps> posted{}, completed{}, last_signal{};
  for (std::uint32_t q = 0; q < nq; ++q) {
    const std::byte* local = write ? side_.tx(q) : side_.rx(q);
    sges[q] = side_.sge(q, local, msg);
    wrs[q].opcode = write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
    wrs[q].sg_list = &sges[q];
    wrs[q].num_sge = 1;
    wrs[q].wr.rdma.remote_addr = write ? side_.remote_rx(q) : side_.remote()[q].addr;
    wrs[q].wr.rdma.rkey = side_.remote()[q].rkey;
  }
  const bool paced = load_.rate_bps != 0;
  const std::uint64_t burst = std::max<std::uint64_t>(msg, load_.rate_bps * kBurstNs / 8'000'000'000ULL);
  TokenBucket bucket(paced ? load_.rate_bps : 1, burst, now_ns());
  std::array<ibv_wc, kPollBatch> wcs{};
  std::uint64_t posted_total = 0;
  std::uint64_t completed_total = 0;
  harness::Watchdog w(stall);
  const char* failed = nullptr;  // what went wrong (the text is built after the loop)
  int post_rc = 0;
  std::uint32_t post_q = 0;
  ibv_wc bad_wc{};

  const auto post = [&](std::uint32_t q, bool force_signal) -> bool {
    const std::uint64_t seq = posted[q] + 1;
    const bool signaled = force_signal || seq % spec.cq_mod == 0;
    wrs[q].send_flags = base_flags | (signaled ? kSignaled : 0U);
    if (signaled) {
      wrs[q].wr_id = (static_cast<std::uint64_t>(q) << 32) | (seq - last_signal[q]);
      last_signal[q] = seq;
    }
    post_rc = side_.qps()[q].post_send(wrs[q]);
    if (post_rc != 0) [[unlikely]] {
      failed = "post";
      post_q = q;
      return false;
    }
    ++posted[q];
    ++posted_total;
    return true;
  };
  // Polls one batch; -1 on a failure (recorded), else the completions seen.
  const auto reap = [&]() -> int {
    const int n = side_.send_cq().poll(wcs);
    if (n < 0) [[unlikely]] {
      failed = "poll";
      return -1;
    }
    for (int k = 0; k < n; ++k) {
      const ibv_wc& wc = wcs[static_cast<std::size_t>(k)];
      if (wc.status != IBV_WC_SUCCESS) [[unlikely]] {
        bad_wc = wc;
        failed = "completion";
        return -1;
      }
      const auto q = static_cast<std::uint32_t>(wc.wr_id >> 32);
      const std::uint64_t covered = wc.wr_id & 0xffffffffULL;
      completed[q] += covered;
      completed_total += covered;
    }
    if (n > 0) {
      bytes_done_.store(completed_total * msg, std::memory_order_relaxed);
      flowing_.store(true, std::memory_order_release);
    }
    return n;
  };
  const auto in_flight = [&] { return posted_total - completed_total; };

  while (!stop.stop_requested() && failed == nullptr) {
    bool busy = false;
    const std::uint64_t t = paced ? now_ns() : 0;
    for (std::uint32_t q = 0; q < nq && failed == nullptr; ++q) {
      while (posted[q] - completed[q] < spec.tx_depth && (!paced || bucket.take(msg, t))) {
        if (!post(q, false)) break;
        busy = true;
      }
    }
    const int n = reap();
    if (n != 0) busy = true;
    if (busy) continue;
    if (in_flight() > 0) {
      if (w.stalled(posted_total + completed_total)) [[unlikely]]
        failed = "stall";
    } else if (paced) {
      // Nothing in flight: only the rate holds the load back (no stall then).
      const std::uint64_t wait = bucket.wait_ns(now_ns());
      if (wait > kSleepAboveNs) sleep_ns(std::min<std::uint64_t>(wait - kSleepAboveNs / 2, 1'000'000));
    }
  }
  // Retire every QP's unsignalled tail, then reap all that is in flight.
  for (std::uint32_t q = 0; q < nq && failed == nullptr; ++q) {
    if (posted[q] == last_signal[q]) continue;
    while (failed == nullptr && posted[q] - completed[q] >= spec.tx_depth) {
      if (reap() == 0 && w.stalled(posted_total + completed_total)) failed = "stall";
    }
    if (failed == nullptr) static_cast<void>(post(q, true));
  }
  while (failed == nullptr && in_flight() > 0) {
    if (reap() == 0 && w.stalled(posted_total + completed_total)) failed = "stall";
  }

  // Off the hot path: the one line of a failure.
  try {
    result_ = outcome(failed, bad_wc, post_rc, wrs[post_q], post_q, w, in_flight());
  } catch (const std::exception& e) {
    result_ = LoadResult{false, e.what()};
  }
  result_.bytes = completed_total * msg;
  ended_.store(true);
}

LoadResult LoadStream::outcome(const char* failed, const ibv_wc& bad_wc, int post_rc, const ibv_send_wr& wr,
                               std::uint32_t post_q, const harness::Watchdog& w, std::uint64_t in_flight) const {
  LoadResult r;
  if (failed != nullptr) {
    r.ok = false;
    const std::string_view what(failed);
    if (what == "completion") {
      std::string qp = fmt::format("qp 0x{:x}", bad_wc.qp_num);
      for (const auto& x : side_.qps()) {
        if (x.qpn() == bad_wc.qp_num) qp = x.describe();
      }
      r.error = verbs::completion_error(bad_wc, qp).what();
    } else if (what == "post") {
      r.error = side_.qps()[post_q].send_error(post_rc, wr).what();
    } else if (what == "poll") {
      r.error = "ibv_poll_cq failed on the load's send CQ";
    } else {
      r.error = fmt::format("no progress for {:.0f} s with {} load WRs in flight; peer dead or fabric down?",
                            w.stall_seconds(), in_flight);
    }
  }
  return r;
}

}  // namespace fabench::pair
