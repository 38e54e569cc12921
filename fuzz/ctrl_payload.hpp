// The payload decoder of one message type (ctrl_<type>.cpp): decode_payload()
// of any bytes returns a message of that type or throws CtrlError, nothing
// else. What decodes at our version is canonical (encode_payload() gives the
// same bytes back); a Hello of another version may carry more fields after
// the frozen ones, and only those are read, so they re-encode to a prefix of
// the input. Every other
// type of another version is refused as kVersion, and a payload whose length
// differs from the header's is kMalformed.
#pragma once

#include <algorithm>

#include "fabench/ctrl/wire.hpp"
#include "fuzz_common.hpp"

namespace fuzz {

template <fabench::ctrl::MsgType kType>
int decode_one_type(const std::uint8_t* data, std::size_t size) {
  using namespace fabench::ctrl;
  const auto in = bytes(data, size);
  auto decode_as = [&](std::uint16_t version, std::uint32_t claimed) {
    FrameHeader h;
    h.version = version;
    h.type = kType;
    h.payload_bytes = claimed;
    return decode_payload(h, in);
  };
  const auto n = static_cast<std::uint32_t>(size);
  try {
    const Message m = decode_as(kProtocolVersion, n);
    FUZZ_CHECK(type_of(m) == kType);
    FUZZ_CHECK(encode_payload(m) == vec(in));
    FUZZ_CHECK(encode(m).size() == kHeaderBytes + size);
  } catch (const CtrlError& e) {
    FUZZ_CHECK(e.kind() == CtrlError::Kind::kMalformed);
  }
  try {
    const Message m = decode_as(kProtocolVersion + 1, n);
    FUZZ_CHECK(kType == MsgType::kHello);
    auto again = encode_payload(m);
    // Our encoder appends an empty challenge (a u32 0) after the frozen fields.
    FUZZ_CHECK(std::get<Hello>(m).challenge.empty() && again.size() >= 4);
    again.resize(again.size() - 4);
    FUZZ_CHECK(again.size() <= size && std::equal(again.begin(), again.end(), in.begin()));
  } catch (const CtrlError& e) {
    FUZZ_CHECK(e.kind() == (kType == MsgType::kHello ? CtrlError::Kind::kMalformed : CtrlError::Kind::kVersion));
  }
  try {
    (void)decode_as(kProtocolVersion, n + 1);
    FUZZ_CHECK(!"a payload shorter than its header says decoded");
  } catch (const CtrlError& e) {
    FUZZ_CHECK(e.kind() == CtrlError::Kind::kMalformed);
  }
  return 0;
}

}  // namespace fuzz
