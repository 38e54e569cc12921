#include "fabench/coll/simulate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "fabench/coll/data.hpp"

namespace fabench::coll {

namespace {

// Thrown at the first broken rule; run_schedules turns it into SimResult::error.
struct SimError {
  std::string what;
};

enum Flag : std::uint8_t {
  kWritten = 1,  // holds data of this call (landed, or written by an op)
  kLanded = 2,   // a transfer landed here (rule A: only once)
  kTouched = 4,  // the owner read or wrote it (rule B: no landing after that)
};

// Per element of a rank's output or scratch.
struct Shadow {
  std::vector<std::uint8_t> flags;
  std::vector<std::int32_t> sent_step;  // last step whose write read the element, -1 if none
  explicit Shadow(std::uint64_t elems) : flags(elems, 0), sent_step(elems, -1) {}
};

struct RankMem {
  std::vector<std::byte> input;
  std::vector<std::byte> output;
  std::vector<std::byte> scratch;
  Shadow out_shadow;
  Shadow scratch_shadow;
  RankMem(const Schedule& s, std::uint64_t dt)
      : input(s.input_bytes),
        output(s.output_bytes),
        scratch(s.scratch_bytes),
        out_shadow(s.output_bytes / dt),
        scratch_shadow(s.scratch_bytes / dt) {}
  std::vector<std::byte>& buf(Buf b) { return b == Buf::kInput ? input : (b == Buf::kOutput ? output : scratch); }
  const std::vector<std::byte>& buf(Buf b) const {
    return b == Buf::kInput ? input : (b == Buf::kOutput ? output : scratch);
  }
  Shadow* shadow(Buf b) { return b == Buf::kInput ? nullptr : &written_shadow(b); }
  // A destination's: never the input (the callers have refused that).
  Shadow& written_shadow(Buf b) { return b == Buf::kOutput ? out_shadow : scratch_shadow; }
};

struct Arrival {
  std::uint32_t from;
  std::size_t staged;  // offset in the step's staging buffer
  const Transfer* t;
};

std::string ranks_text(std::vector<std::uint32_t> v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size() && i < 8; ++i) out += fmt::format("{}{}", i ? " " : "", v[i]);
  if (v.size() > 8) out += fmt::format(" ... ({} in all)", v.size());
  return out + "]";
}

class Simulator {
 public:
  Simulator(std::span<const Schedule> s, const RunConfig& cfg) : s_(s), cfg_(cfg), dt_(dtype_size(cfg.dtype)) {}

  void run(SimResult& result);

 private:
  [[noreturn]] void fail(std::string what) const { throw SimError{fmt::format("step {}: {}", step_, what)}; }
  void check_consistent() const;
  void fill_inputs();
  void check_region(std::uint32_t rank, Buf b, std::uint64_t off, std::uint64_t bytes, const char* what) const;
  void read(std::uint32_t rank, Buf b, std::uint64_t off, std::uint64_t bytes, bool by_write, const char* what);
  void land(std::uint32_t rank, const Arrival& a);
  void op_write(std::uint32_t rank, const LocalOp& op);
  void post_writes();
  void match_and_land();
  void run_ops();
  void run_op(std::uint32_t rank, const LocalOp& op);
  void check_outputs(SimResult& result) const;

  std::span<const Schedule> s_;
  RunConfig cfg_;
  std::uint64_t dt_;
  std::vector<RankMem> mem_;
  std::vector<StepView> views_;  // every rank's current step
  std::vector<std::vector<Arrival>> inbox_;
  std::vector<std::byte> staging_;
  std::size_t step_ = 0;
};

void Simulator::check_consistent() const {
  if (s_.empty()) throw SimError{"no schedules"};
  const Schedule& a = s_[0];
  if (a.nranks != s_.size()) throw SimError{fmt::format("{} schedules for {} ranks", s_.size(), a.nranks)};
  if (a.dtype_bytes != dt_) {
    throw SimError{fmt::format("schedules for {}-byte elements, data of {}", a.dtype_bytes, dt_)};
  }
  for (std::uint32_t r = 0; r < s_.size(); ++r) {
    const Schedule& b = s_[r];
    const bool same = b.rank == r && b.collective == a.collective && b.nranks == a.nranks && b.count == a.count &&
                      b.dtype_bytes == a.dtype_bytes && b.input_bytes == a.input_bytes &&
                      b.output_bytes == a.output_bytes && b.scratch_bytes == a.scratch_bytes &&
                      b.num_steps() == a.num_steps();
    if (!same) throw SimError{fmt::format("schedule {} does not describe the same call as schedule 0", r)};
  }
}

void Simulator::fill_inputs() {
  const DataSpec spec{cfg_.dtype, cfg_.op, s_[0].nranks, cfg_.seed};
  mem_.reserve(s_.size());
  for (std::uint32_t r = 0; r < s_.size(); ++r) {
    mem_.emplace_back(s_[r], dt_);
    const std::uint64_t elems = s_[r].input_bytes / dt_;
    if (cfg_.data == SimData::kExact) {
      fill_input(spec, r, mem_[r].input.data(), elems);
    } else {
      fill_random(cfg_.dtype, r, mem_[r].input.data(), elems, cfg_.seed);
    }
  }
  inbox_.resize(s_.size());
  views_.resize(s_.size());
}

void Simulator::check_region(std::uint32_t rank, Buf b, std::uint64_t off, std::uint64_t bytes,
                             const char* what) const {
  const std::uint64_t size = mem_[rank].buf(b).size();
  if (bytes == 0) fail(fmt::format("rank {}: {} of zero bytes", rank, what));
  if (off % dt_ != 0 || bytes % dt_ != 0) {
    fail(fmt::format("rank {}: {} {} [{}, +{}) not aligned to {}-byte elements", rank, what, buf_name(b), off, bytes,
                     dt_));
  }
  if (off > size || bytes > size - off) {
    fail(fmt::format("rank {}: {} {} [{}, +{}) beyond its {} bytes", rank, what, buf_name(b), off, bytes, size));
  }
}

// A read by the owner: as a write's source (by_write) or an op's operand.
void Simulator::read(std::uint32_t rank, Buf b, std::uint64_t off, std::uint64_t bytes, bool by_write,
                     const char* what) {
  Shadow* sh = mem_[rank].shadow(b);
  if (sh == nullptr) return;  // input: always valid, never written
  // Raw pointers in the per-element loops (check_region bounded them): the asan preset's
  // _GLIBCXX_ASSERTIONS made each vector subscript a call, most of the sanitized unit tests' time.
  std::uint8_t* flags = sh->flags.data();
  std::int32_t* sent = sh->sent_step.data();
  const auto step = static_cast<std::int32_t>(step_);
  const std::uint64_t end = (off + bytes) / dt_;
  for (std::uint64_t e = off / dt_; e < end; ++e) {
    if (!(flags[e] & kWritten)) {
      fail(fmt::format("rank {}: {} reads {} byte {} before anything wrote it (rule D)", rank, what, buf_name(b),
                       e * dt_));
    }
    flags[e] |= kTouched;
    if (by_write) sent[e] = step;
  }
}

void Simulator::land(std::uint32_t rank, const Arrival& a) {
  const Transfer& t = *a.t;
  std::uint8_t* flags = mem_[rank].written_shadow(t.dst_buf).flags.data();
  const std::uint64_t end = (t.dst_offset + t.bytes) / dt_;
  for (std::uint64_t e = t.dst_offset / dt_; e < end; ++e) {
    if (flags[e] & kLanded) {
      fail(fmt::format("rank {} {} byte {}: written by a second transfer (from rank {}) in one call (rule A)", rank,
                       buf_name(t.dst_buf), e * dt_, a.from));
    }
    if (flags[e] & kTouched) {
      fail(fmt::format("rank {} {} byte {}: the transfer from rank {} lands after rank {} used the byte (rule B)", rank,
                       buf_name(t.dst_buf), e * dt_, a.from, rank));
    }
    flags[e] |= kLanded | kWritten;
  }
  std::memcpy(mem_[rank].buf(t.dst_buf).data() + t.dst_offset, staging_.data() + a.staged, t.bytes);
}

void Simulator::op_write(std::uint32_t rank, const LocalOp& op) {
  Shadow& sh = mem_[rank].written_shadow(op.dst_buf);
  std::uint8_t* flags = sh.flags.data();
  const std::int32_t* sent = sh.sent_step.data();
  const auto step = static_cast<std::int32_t>(step_);
  const bool is_reduce = op.kind == OpKind::kReduce;
  const std::uint64_t end = (op.dst_offset + op.bytes) / dt_;
  for (std::uint64_t e = op.dst_offset / dt_; e < end; ++e) {
    if (is_reduce && !(flags[e] & kWritten)) {
      fail(fmt::format("rank {}: reduce into {} byte {} before anything wrote it (rule D)", rank, buf_name(op.dst_buf),
                       e * dt_));
    }
    if (sent[e] == step) {
      fail(fmt::format("rank {}: an op writes {} byte {} that a write of the same step sends (rule C)", rank,
                       buf_name(op.dst_buf), e * dt_));
    }
    flags[e] |= kTouched | kWritten;
  }
}

void Simulator::post_writes() {
  staging_.clear();
  for (auto& box : inbox_) box.clear();
  for (std::uint32_t r = 0; r < s_.size(); ++r) views_[r] = s_[r].step(step_);
  for (std::uint32_t r = 0; r < s_.size(); ++r) {
    for (const Transfer& t : views_[r].writes) {
      if (t.dst_rank >= s_.size() || t.dst_rank == r) fail(fmt::format("rank {}: write to rank {}", r, t.dst_rank));
      if (t.dst_buf == Buf::kInput) fail(fmt::format("rank {}: write into rank {}'s input (rule D)", r, t.dst_rank));
      check_region(r, t.src_buf, t.src_offset, t.bytes, "write source");
      check_region(t.dst_rank, t.dst_buf, t.dst_offset, t.bytes, "write destination");
      read(r, t.src_buf, t.src_offset, t.bytes, true, "a write");
      const std::size_t staged = staging_.size();
      const std::byte* src = mem_[r].buf(t.src_buf).data() + t.src_offset;
      staging_.insert(staging_.end(), src, src + t.bytes);
      inbox_[t.dst_rank].push_back(Arrival{r, staged, &t});
    }
  }
}

void Simulator::match_and_land() {
  std::vector<std::uint32_t> got;
  std::vector<std::uint32_t> want;
  for (std::uint32_t r = 0; r < s_.size(); ++r) {
    got.clear();
    for (const Arrival& a : inbox_[r]) got.push_back(a.from);
    const auto expect = views_[r].expect_from;
    want.assign(expect.begin(), expect.end());
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
    if (got != want) {
      fail(fmt::format("rank {} expects arrivals from {} but gets them from {}", r, ranks_text(want), ranks_text(got)));
    }
    for (const Arrival& a : inbox_[r]) land(r, a);
  }
}

void Simulator::run_op(std::uint32_t rank, const LocalOp& op) {
  if (op.dst_buf == Buf::kInput) fail(fmt::format("rank {}: an op writes input (rule D)", rank));
  check_region(rank, op.src_buf, op.src_offset, op.bytes, "op source");
  check_region(rank, op.dst_buf, op.dst_offset, op.bytes, "op destination");
  const bool overlap = op.src_buf == op.dst_buf && op.src_offset < op.dst_offset + op.bytes &&
                       op.dst_offset < op.src_offset + op.bytes;
  if (overlap) fail(fmt::format("rank {}: an op's source and destination overlap", rank));
  read(rank, op.src_buf, op.src_offset, op.bytes, false, "an op");
  op_write(rank, op);
  std::byte* dst = mem_[rank].buf(op.dst_buf).data() + op.dst_offset;
  const std::byte* src = mem_[rank].buf(op.src_buf).data() + op.src_offset;
  if (op.kind == OpKind::kCopy) {
    std::memcpy(dst, src, op.bytes);
  } else {
    reduce(cfg_.dtype, cfg_.op, dst, src, op.bytes / dt_);
  }
}

void Simulator::run_ops() {
  for (std::uint32_t r = 0; r < s_.size(); ++r) {
    for (const LocalOp& op : views_[r].ops) run_op(r, op);
  }
}

void Simulator::check_outputs(SimResult& result) const {
  const Schedule& s0 = s_[0];
  const std::uint32_t n = s0.nranks;
  const bool replicated = s0.collective == Collective::kAllReduce || s0.collective == Collective::kAllGather;
  for (std::uint32_t r = 1; r < n && replicated; ++r) {
    if (mem_[r].output != mem_[0].output) result.identical = false;
  }
  if (cfg_.data != SimData::kExact) return;
  const DataSpec spec{cfg_.dtype, cfg_.op, n, cfg_.seed};
  const std::uint64_t elems = s0.output_bytes / dt_;
  // The reduction over all ranks once (O(n x count)); each rank's expected is that or a block of it.
  std::vector<std::byte> full(s0.count * dt_);
  if (s0.collective == Collective::kAllReduce || s0.collective == Collective::kReduceScatter) {
    reference_reduction(spec, s0.count, full.data());
  } else if (s0.collective == Collective::kAllGather) {
    expected_output(spec, s0.collective, 0, s0.count, full.data());
  }
  std::vector<std::byte> mine(s0.output_bytes);
  for (std::uint32_t r = 0; r < n; ++r) {
    const std::byte* want = full.data();
    if (s0.collective == Collective::kReduceScatter) want += r * s0.output_bytes;
    if (s0.collective == Collective::kAllToAll) {
      expected_output(spec, s0.collective, r, s0.count, mine.data());
      want = mine.data();
    }
    const std::uint64_t wrong = count_wrong(cfg_.dtype, mem_[r].output.data(), want, elems);
    if (wrong != 0 && result.wrong == 0) {
      for (std::uint64_t e = 0; e < elems; ++e) {
        const float got = load_element(cfg_.dtype, mem_[r].output.data() + e * dt_);
        const float exp = load_element(cfg_.dtype, want + e * dt_);
        if (std::memcmp(mem_[r].output.data() + e * dt_, want + e * dt_, dt_) != 0) {
          result.first_wrong = fmt::format("rank {} element {}: got {}, expected {}", r, e, got, exp);
          break;
        }
      }
    }
    result.wrong += wrong;
  }
}

void Simulator::run(SimResult& result) {
  check_consistent();
  result.count = s_[0].count;
  result.steps = s_[0].num_steps();
  for (const Schedule& s : s_) result.wire_bytes += wire_bytes(s);
  fill_inputs();
  for (step_ = 0; step_ < result.steps; ++step_) {
    post_writes();
    match_and_land();
    run_ops();
  }
  check_outputs(result);
  if (cfg_.keep_outputs) {
    for (RankMem& m : mem_) result.outputs.push_back(std::move(m.output));
  }
}

}  // namespace

SimResult run_schedules(std::span<const Schedule> schedules, const RunConfig& config) {
  SimResult result;
  try {
    Simulator sim(schedules, config);
    sim.run(result);
  } catch (const SimError& e) {
    result.error = e.what;
  }
  return result;
}

SimResult simulate(const SimConfig& config) {
  std::vector<Schedule> schedules;
  schedules.reserve(config.nranks);
  for (std::uint32_t r = 0; r < config.nranks; ++r) {
    schedules.push_back(build_schedule(config.collective, config.algorithm, config.nranks, r, config.count,
                                       dtype_size(config.run.dtype), config.options));
  }
  return run_schedules(schedules, config.run);
}

}  // namespace fabench::coll
