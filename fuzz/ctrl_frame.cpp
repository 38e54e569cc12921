// Whole control frames (ctrl/wire.hpp): decode() of any bytes returns a
// Message or throws CtrlError (kMalformed or kVersion), nothing else. A frame
// of our own version that decodes is canonical: encode() gives back exactly
// its bytes. A Hello of another version decodes (its layout is frozen) and
// re-encodes to a frame that decodes to the same bytes again.
#include "fabench/ctrl/wire.hpp"
#include "fuzz_common.hpp"

using namespace fabench::ctrl;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto in = fuzz::bytes(data, size);
  try {
    const Message m = decode(in);
    const FrameHeader h = decode_header(in);
    FUZZ_CHECK(type_of(m) == h.type);
    FUZZ_CHECK(h.payload_bytes == size - kHeaderBytes);
    const auto again = encode(m);
    if (h.version == kProtocolVersion) {
      FUZZ_CHECK(again == fuzz::vec(in));
    } else {
      FUZZ_CHECK(h.type == MsgType::kHello);
      FUZZ_CHECK(encode(decode(again)) == again);
    }
  } catch (const CtrlError& e) {
    FUZZ_CHECK(e.kind() == CtrlError::Kind::kMalformed || e.kind() == CtrlError::Kind::kVersion);
    FUZZ_CHECK(std::string_view(e.what()).size() > 0);
  }
  // The header alone, against a limit taken from the input (Channel::recv's path).
  if (size >= kHeaderBytes + 2) {
    const std::uint32_t limit = static_cast<std::uint32_t>(data[kHeaderBytes]) << (data[kHeaderBytes + 1] % 24);
    try {
      const FrameHeader h = decode_header(in, limit);
      FUZZ_CHECK(h.magic == kMagic);
      FUZZ_CHECK(h.payload_bytes <= limit);
      FUZZ_CHECK(is_known_type(static_cast<std::uint16_t>(h.type)));
      (void)type_name(h.type);
    } catch (const CtrlError& e) {
      FUZZ_CHECK(e.kind() == CtrlError::Kind::kMalformed || e.kind() == CtrlError::Kind::kVersion);
    }
  }
  return 0;
}
