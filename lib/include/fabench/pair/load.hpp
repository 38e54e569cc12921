// The load of fabench-lat --load: its command-line syntax (parse_load_spec,
// the bit rates of rate=), the token bucket that paces it, and LoadStream,
// one end's load resources (a bandwidth-kind Side of its own: QPs, CQs,
// registered buffer) and the thread that streams over them while the
// latency loop runs. The latency loop itself does not know the load exists.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "fabench/harness/context.hpp"
#include "fabench/harness/loop.hpp"
#include "fabench/pair/engines.hpp"
#include "fabench/pair/side.hpp"
#include "fabench/pair/spec.hpp"

namespace fabench::pair {

inline constexpr std::uint32_t kMaxLoadQps = 64;

// "OP,SIZE[,qps=N][,rate=RATE][,bidir]": "write,64K", "write,1M,qps=2,rate=2G",
// "read,64K,bidir". Throws harness::UsageError with one line naming the bad part.
[[nodiscard]] LoadSpec parse_load_spec(std::string_view text);

// "2G", "2.5G", "800M", "100Mbps", "1Gbit/s", "50000" -> bits per second
// (K, M, G, T = 1e3, 1e6, 1e9, 1e12: link rates are decimal). Bytes ("2GB")
// and values that round below 1 bit/s are refused. Throws
// std::invalid_argument with the reason.
[[nodiscard]] std::uint64_t parse_bit_rate(std::string_view text);
// The shortest exact form: 2000000000 -> "2G", 2500000000 -> "2500M", 1234 -> "1234".
[[nodiscard]] std::string format_bit_rate(std::uint64_t bits_per_s);

// Paces a stream at `bits_per_s` of payload on the caller's clock (ns). A
// message may go whenever the bucket is not in debt; it takes its bytes,
// which may leave the bucket in debt until the rate has paid them back. So
// the rate holds exactly whatever the message size and however coarse the
// caller's clock steps. The bucket starts empty (the first message goes at
// once) and saves at most `burst_bytes` while the stream is idle. No
// allocation, no system call.
class TokenBucket {
 public:
  TokenBucket(std::uint64_t bits_per_s, std::uint64_t burst_bytes, std::uint64_t now_ns) noexcept
      : bytes_per_ns_(static_cast<double>(bits_per_s) / 8e9),
        burst_(static_cast<double>(burst_bytes)),
        last_ns_(now_ns) {}

  // Takes `bytes` and returns true when a message may go at `now_ns`.
  [[nodiscard]] bool take(std::uint64_t bytes, std::uint64_t now_ns) noexcept {
    refill(now_ns);
    if (tokens_ < 0) return false;
    tokens_ -= static_cast<double>(bytes);
    return true;
  }
  // Nanoseconds from `now_ns` until take() would succeed (0: now).
  [[nodiscard]] std::uint64_t wait_ns(std::uint64_t now_ns) noexcept {
    refill(now_ns);
    return tokens_ >= 0 ? 0 : static_cast<std::uint64_t>(-tokens_ / bytes_per_ns_) + 1;
  }

 private:
  void refill(std::uint64_t now_ns) noexcept {
    if (now_ns > last_ns_) {
      tokens_ = std::min(burst_, tokens_ + static_cast<double>(now_ns - last_ns_) * bytes_per_ns_);
      last_ns_ = now_ns;
    }
  }

  double bytes_per_ns_;
  double burst_;
  double tokens_ = 0;  // bytes; negative: the debt of the last message
  std::uint64_t last_ns_;
};

// What one end's load did in one run.
struct LoadResult {
  bool ok = true;
  std::string error;        // one line when !ok
  double seconds = 0;       // the measurement window (see the users of bytes_done())
  std::uint64_t bytes = 0;  // payload bytes completed inside that window
};

// One end's load: built at setup beside the latency Side, from
// load_stream_spec(latency), connected with the same endpoint exchange. The
// leader always streams; the follower only when the load is bidirectional
// (otherwise its QPs and memory are the passive target of one-sided ops).
class LoadStream {
 public:
  LoadStream(const harness::Context& ctx, const TestSpec& latency, const SideOptions& options, Role role);
  ~LoadStream();
  LoadStream(const LoadStream&) = delete;
  LoadStream& operator=(const LoadStream&) = delete;

  [[nodiscard]] std::vector<verbs::Endpoint> endpoints() const { return side_.endpoints(); }
  void connect(const std::vector<verbs::Endpoint>& remote) { side_.connect(remote); }
  [[nodiscard]] const Side& side() const noexcept { return side_; }
  [[nodiscard]] bool streams() const noexcept { return role_ == Role::kLeader || load_.bidirectional; }

  // Starts this end's streaming thread (nothing when it does not stream) and
  // waits until its first completion: the load is flowing before the
  // latency loop starts. One line when it failed or nothing completed within
  // `stall` (then the thread is stopped already); empty on success.
  [[nodiscard]] std::string start(std::chrono::milliseconds stall);
  // Payload bytes completed since start() (one relaxed load: the caller
  // brackets its window with two reads).
  [[nodiscard]] std::uint64_t bytes_done() const noexcept { return bytes_done_.load(std::memory_order_relaxed); }
  // Stops the thread: no more posts; what is in flight completes (bounded by
  // the stall time). ok = false with the reason when the load failed.
  [[nodiscard]] LoadResult stop();
  // After both ends stopped: bytes of the peer's load data that differ from
  // its pattern (write: what it wrote here; read: what we read from it).
  [[nodiscard]] std::uint64_t check_payload() const;

 private:
  struct Run;  // the streaming loop's state and steps (load.cpp)
  void stream(const std::stop_token& stop, std::chrono::milliseconds stall) noexcept;
  // The one line of the failure the loop recorded, if any.
  [[nodiscard]] LoadResult outcome(const Run& run) const;

  Side side_;
  LoadSpec load_;
  Role role_;
  std::atomic<std::uint64_t> bytes_done_{0};
  std::atomic<bool> flowing_{false};  // a first completion arrived
  std::atomic<bool> ended_{false};    // the thread left its loop (stopped or failed)
  LoadResult result_;                 // the thread's, read after join
  // Declared last: stopped and joined before the Side it posts to goes.
  std::jthread thread_;
};

}  // namespace fabench::pair
