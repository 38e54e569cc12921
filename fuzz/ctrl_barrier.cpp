// The Barrier payload decoder: see ctrl_payload.hpp for what must hold.
#include "ctrl_payload.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return fuzz::decode_one_type<fabench::ctrl::MsgType::kBarrier>(data, size);
}
