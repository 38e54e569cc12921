// A pair follower's view of its leader's "setup" Command (pair/spec.hpp):
// the Command payload decodes (or CtrlError), TestSpec::from_params() builds
// a spec or throws std::invalid_argument, nothing else. A spec survives
// to_params()/from_params() unchanged, and one that validate() accepts is
// one a server can size: its message fits its slot, its slots fit its
// region, and buffer_bytes() (checked against --max-mem) is the whole
// region times the queue pairs, not a product that wrapped around 2^64.
#include <limits>
#include <stdexcept>

#include "fabench/ctrl/wire.hpp"
#include "fabench/pair/spec.hpp"
#include "fuzz_common.hpp"

using namespace fabench;
using pair::TestSpec;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ctrl::FrameHeader h;
  h.type = ctrl::MsgType::kCommand;
  h.payload_bytes = static_cast<std::uint32_t>(size);
  ctrl::Command cmd;
  try {
    cmd = std::get<ctrl::Command>(ctrl::decode_payload(h, fuzz::bytes(data, size)));
  } catch (const ctrl::CtrlError&) {
    return 0;
  }
  TestSpec s;
  try {
    s = TestSpec::from_params(cmd.params);
  } catch (const std::invalid_argument& e) {
    FUZZ_CHECK(std::string_view(e.what()).size() > 0);
    return 0;
  }
  FUZZ_CHECK(TestSpec::from_params(s.to_params()) == s);
  FUZZ_CHECK(!s.name().empty());
  (void)s.remote_access();
  if (!pair::validate(s).empty()) return 0;
  const std::uint64_t payload = pair::is_atomic(s.op) ? pair::kAtomicBytes : s.msg_bytes;
  FUZZ_CHECK(s.slot_bytes() >= payload);
  FUZZ_CHECK(s.region_bytes() >= 2 * s.slot_bytes());
  FUZZ_CHECK(s.qps >= 1);
  FUZZ_CHECK(s.region_bytes() <= std::numeric_limits<std::uint64_t>::max() / s.qps);
  FUZZ_CHECK(s.buffer_bytes() / s.qps == s.region_bytes());
  return 0;
}
