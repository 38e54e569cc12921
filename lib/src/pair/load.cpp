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
#include "fabench/harness/steps.hpp"
#include "fabench/verbs/error.hpp"

namespace fabench::pair {

namespace {

using harness::now_ns;
using harness::UsageError;

using harness::kPollBatch;
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

namespace {

// The load's QPs wait at least 4.096 us x 2^kLoadQpTimeout (1.07 s) for an
// ACK before they retransmit, whatever -u gives the latency QP. A load keeps
// up to ~4 MiB per QP in flight, longer to drain on a slow link (the test
// bed's ~0.05 GB/s, shared by both directions and the latency traffic) than
// perftest's 67 ms (-u 14), and a starved emulated guest goes longer than that
// without running its ACKs. Retransmissions that fire that early are
// spurious: rxe can answer a duplicate with a NAK (remote invalid request),
// which moves the responding QP to the error state, so the end that streams
// both ways sees its own WRs flushed; else 7 timeouts in a row exhaust the
// retry count. Not longer: a lost last packet (nothing follows it to draw a
// sequence NAK) waits out one timeout, and a latency loop of 2000 round trips
// must not be spent inside it (test/rxe/bench_lat_load.sh). -u 0 (no
// timeout) is kept; -u above 18 too.
constexpr unsigned kLoadQpTimeout = 18;

SideOptions load_side_options(SideOptions o) {
  if (o.qp_timeout != 0) o.qp_timeout = std::max(o.qp_timeout, kLoadQpTimeout);
  return o;
}

}  // namespace

LoadStream::LoadStream(const harness::Context& ctx, const TestSpec& latency, const SideOptions& options, Role role)
    : side_(ctx, load_stream_spec(latency), load_side_options(options)),
      load_(latency.load.value_or(LoadSpec{})),
      role_(role) {
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

// The streaming loop's state and steps. Per QP one prebuilt WR (one SGE);
// only send_flags and the wr_id of signalled WRs change. A WR is signalled
// every cq_mod on its QP; its wr_id packs (qp << 32) | WRs it retires
// (harness::flag_stream_wr). The window per QP never exceeds tx_depth
// (cq_mod <= tx_depth / 4, so a full window holds a signalled WR). On stop,
// each QP's unsignalled tail is retired by one more signalled WR, and
// everything in flight is reaped, so the next run starts on empty queues.
struct LoadStream::Run {
  Run(const Side& s, std::chrono::milliseconds stall, std::atomic<std::uint64_t>& bytes,
      std::atomic<bool>& flowing_flag)
      : side(s), spec(s.spec()), msg(static_cast<std::uint32_t>(spec.msg_bytes)), w(stall), bytes_done(bytes),
        flowing(flowing_flag) {
    const bool write = spec.op == Op::kWrite;
    base_flags = (write && msg <= side.inline_threshold()) ? static_cast<std::uint32_t>(IBV_SEND_INLINE) : 0U;
    for (std::uint32_t q = 0; q < side.qps().size(); ++q) {
      sges[q] = side.sge(q, write ? side.tx(q) : side.rx(q), msg);
      wrs[q].opcode = write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
      wrs[q].sg_list = &sges[q];
      wrs[q].num_sge = 1;
      wrs[q].wr.rdma.remote_addr = write ? side.remote_rx(q) : side.remote()[q].addr;
      wrs[q].wr.rdma.rkey = side.remote()[q].rkey;
    }
  }
  [[nodiscard]] std::uint64_t in_flight() const noexcept { return posted_total - completed_total; }
  [[nodiscard]] std::uint64_t progress() const noexcept { return posted_total + completed_total; }

  // Posts QP q's next WR (signalled every cq_mod, or when forced); false on a failure (recorded).
  bool post(std::uint32_t q, bool force_signal) noexcept {
    const std::uint64_t seq = qps[q].posted + 1;
    harness::flag_stream_wr(wrs[q], base_flags, force_signal || seq % spec.cq_mod == 0, q, seq, qps[q]);
    post_rc = side.qps()[q].post_send(wrs[q]);
    if (post_rc != 0) [[unlikely]] {
      failed = "post";
      post_q = q;
      return false;
    }
    ++qps[q].posted;
    ++posted_total;
    return true;
  }
  // Post step: fills every QP's window, as far as the token bucket allows.
  bool fill_windows(TokenBucket* bucket, std::uint64_t t) noexcept {
    bool busy = false;
    for (std::uint32_t q = 0; q < side.qps().size() && failed == nullptr; ++q) {
      while (qps[q].posted - qps[q].completed < spec.tx_depth && (bucket == nullptr || bucket->take(msg, t))) {
        if (!post(q, false)) break;
        busy = true;
      }
    }
    return busy;
  }
  // Reap step: one batch; -1 on a failure (recorded, the failed completion in bad_wc).
  int reap() noexcept {
    const int n = harness::reap_stream(side.send_cq(), wcs, qps.data(), completed_total);
    if (n < 0) [[unlikely]] {
      bad_wc = wcs[0];
      failed = bad_wc.status == IBV_WC_SUCCESS ? "poll" : "completion";
      return -1;
    }
    if (n > 0) {
      bytes_done.store(completed_total * msg, std::memory_order_relaxed);
      flowing.store(true, std::memory_order_release);
    }
    return n;
  }
  // Reaps until `done()`, the stall or a failure.
  template <typename Done>
  void reap_until(Done done) noexcept {
    while (failed == nullptr && !done()) {
      if (reap() == 0 && w.stalled(progress())) failed = "stall";
    }
  }
  // After a stop: retire every QP's unsignalled tail, then reap all in flight.
  void drain() noexcept {
    for (std::uint32_t q = 0; q < side.qps().size() && failed == nullptr; ++q) {
      if (qps[q].posted == qps[q].last_signal) continue;
      reap_until([&] { return qps[q].posted - qps[q].completed < spec.tx_depth; });
      if (failed == nullptr) static_cast<void>(post(q, true));
    }
    reap_until([&] { return in_flight() == 0; });
  }

  const Side& side;
  const TestSpec& spec;
  const std::uint32_t msg;
  std::uint32_t base_flags = 0;
  std::array<ibv_sge, kMaxLoadQps> sges{};
  std::array<ibv_send_wr, kMaxLoadQps> wrs{};
  std::array<harness::StreamQp, kMaxLoadQps> qps{};
  std::array<ibv_wc, kPollBatch> wcs{};
  std::uint64_t posted_total = 0;
  std::uint64_t completed_total = 0;
  harness::Watchdog w;
  std::atomic<std::uint64_t>& bytes_done;
  std::atomic<bool>& flowing;
  const char* failed = nullptr;  // what went wrong (the text is built after the loop)
  int post_rc = 0;
  std::uint32_t post_q = 0;
  ibv_wc bad_wc{};
};

void LoadStream::stream(const std::stop_token& stop, std::chrono::milliseconds stall) noexcept {
  Run run(side_, stall, bytes_done_, flowing_);
  const bool paced = load_.rate_bps != 0;
  const std::uint64_t burst = std::max<std::uint64_t>(run.msg, load_.rate_bps * kBurstNs / 8'000'000'000ULL);
  TokenBucket bucket(paced ? load_.rate_bps : 1, burst, now_ns());
  while (!stop.stop_requested() && run.failed == nullptr) {
    bool busy = run.fill_windows(paced ? &bucket : nullptr, paced ? now_ns() : 0);
    if (run.reap() != 0) busy = true;
    if (busy) continue;
    if (run.in_flight() > 0) {
      if (run.w.stalled(run.progress())) [[unlikely]]
        run.failed = "stall";
    } else if (paced) {
      // Nothing in flight: only the rate holds the load back (no stall then).
      const std::uint64_t wait = bucket.wait_ns(now_ns());
      if (wait > kSleepAboveNs) sleep_ns(std::min<std::uint64_t>(wait - kSleepAboveNs / 2, 1'000'000));
    }
  }
  run.drain();
  // Off the hot path: the one line of a failure.
  try {
    result_ = outcome(run);
  } catch (const std::exception& e) {
    result_ = LoadResult{false, e.what()};
  }
  result_.bytes = run.completed_total * run.msg;
  ended_.store(true);
}

// A failed completion is reported as the first failure of its QP: a flush
// only says the QP is in the error state (harness::first_failure).
LoadResult LoadStream::outcome(const Run& run) const {
  LoadResult r;
  if (run.failed == nullptr) return r;
  r.ok = false;
  const std::string_view what(run.failed);
  if (what == "completion") {
    const ibv_wc wc = harness::first_failure(side_.send_cq(), run.bad_wc);
    std::string qp = fmt::format("qp 0x{:x}", wc.qp_num);
    for (const auto& x : side_.qps()) {
      if (x.qpn() == wc.qp_num) qp = x.describe();
    }
    r.error = harness::failure_text(wc, qp);
  } else if (what == "post") {
    r.error = side_.qps()[run.post_q].send_error(run.post_rc, run.wrs[run.post_q]).what();
  } else if (what == "poll") {
    r.error = "ibv_poll_cq failed on the load's send CQ";
  } else {
    r.error = fmt::format("no progress for {:.0f} s with {} load WRs in flight; peer dead or fabric down?",
                          run.w.stall_seconds(), run.in_flight());
  }
  return r;
}

}  // namespace fabench::pair
