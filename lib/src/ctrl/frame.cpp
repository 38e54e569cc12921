// Frames of the control protocol: a fixed header (magic, version, type,
// payload length) before a message's payload (wire.hpp).
#include "fabench/ctrl/wire.hpp"

#include <fmt/format.h>

#include "wire_codec.hpp"

namespace fabench::ctrl {

using detail::malformed;
using detail::Reader;
using detail::Writer;

std::vector<std::uint8_t> encode(const Message& msg, std::uint32_t max_payload_bytes, std::uint16_t version) {
  const std::vector<std::uint8_t> body = encode_payload(msg);
  if (body.size() > max_payload_bytes) {
    throw CtrlError(CtrlError::Kind::kMalformed,
                    fmt::format("cannot send {} of {} bytes: the control frame limit is {} bytes",
                                type_name(type_of(msg)), body.size(), max_payload_bytes));
  }
  std::vector<std::uint8_t> out;
  out.reserve(kHeaderBytes + body.size());
  Writer h(out);
  h.uint(kMagic);
  h.uint(version);
  h.uint(static_cast<std::uint16_t>(type_of(msg)));
  h.uint(static_cast<std::uint32_t>(body.size()));
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

FrameHeader decode_header(std::span<const std::uint8_t> bytes, std::uint32_t max_payload_bytes) {
  if (bytes.size() < kHeaderBytes) {
    malformed(fmt::format("truncated header ({} of {} bytes)", bytes.size(), kHeaderBytes));
  }
  Reader r(bytes.first(kHeaderBytes), "header");
  FrameHeader h;
  h.magic = r.uint<std::uint32_t>("magic");
  h.version = r.uint<std::uint16_t>("version");
  const auto raw_type = r.uint<std::uint16_t>("type");
  h.payload_bytes = r.uint<std::uint32_t>("payload length");
  if (h.magic != kMagic) {
    malformed(
        fmt::format("bad magic {:#010x} (expected {:#010x}); the peer is not a fabench control "
                    "channel",
                    h.magic, kMagic));
  }
  if (!is_known_type(raw_type)) {
    // A newer peer's type would come with a newer version: say so.
    if (h.version != kProtocolVersion) {
      throw CtrlError(CtrlError::Kind::kVersion,
                      fmt::format("peer speaks fabench control protocol v{}, this build speaks v{} "
                                  "(unknown message type {})",
                                  h.version, kProtocolVersion, raw_type));
    }
    malformed(fmt::format("unknown message type {}", raw_type));
  }
  h.type = static_cast<MsgType>(raw_type);
  if (h.payload_bytes > max_payload_bytes) {
    malformed(fmt::format("{} payload of {} bytes exceeds the limit of {} bytes", type_name(h.type), h.payload_bytes,
                          max_payload_bytes));
  }
  return h;
}

Message decode(std::span<const std::uint8_t> frame, std::uint32_t max_payload_bytes) {
  const FrameHeader h = decode_header(frame, max_payload_bytes);
  const auto rest = frame.subspan(kHeaderBytes);
  if (rest.size() < h.payload_bytes) {
    malformed(
        fmt::format("{}: truncated frame ({} of {} payload bytes)", type_name(h.type), rest.size(), h.payload_bytes));
  }
  if (rest.size() > h.payload_bytes) {
    malformed(fmt::format("{}: {} bytes after the end of the frame", type_name(h.type), rest.size() - h.payload_bytes));
  }
  return decode_payload(h, rest);
}

}  // namespace fabench::ctrl
