// Wire format of the control plane: framed, versioned messages.
//
// A frame is a fixed 12-byte header followed by the payload:
//
//   offset 0  u32  magic            kMagic ("FBCP" on the wire)
//   offset 4  u16  protocol version kProtocolVersion of the sender
//   offset 6  u16  message type     MsgType
//   offset 8  u32  payload bytes    at most the receiver's limit (kMaxPayloadBytes)
//
// Every integer is little-endian and written field by field (never a memcpy of
// a struct, whose padding and byte order are the compiler's). Strings and byte
// strings are a u32 length then the bytes; lists are a u32 count then the
// elements; doubles are their IEEE-754 bits as a u64. A Record (Result) is a
// u32 field count, then per field its name (a string), a u8 kind (0 f64,
// 1 u64, 2 f64 list: a u32 count then the doubles) and the value.
//
// Decoding never trusts a length: every length and count is checked against
// the bytes actually left before anything is read or allocated, and a payload
// must be consumed exactly (trailing bytes are an error). Everything that does
// not decode throws CtrlError (kMalformed or kVersion).
//
// Versioning: a receiver decodes only frames of its own protocol version, with
// one exception: the first five fields of the Hello payload are frozen, so a
// Hello of any version decodes (fields a version appends after them are read
// only at that version) and the handshake can name both versions in one line.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "fabench/base/build_info.hpp"
#include "fabench/base/endpoint.hpp"
#include "fabench/ctrl/error.hpp"
#include "fabench/ctrl/record.hpp"

namespace fabench::ctrl {

inline constexpr std::uint32_t kMagic = 0x50434246;  // bytes 'F' 'B' 'C' 'P'
// v2: Keepalive (a leader proves it is alive while its follower waits).
// v3: Hello.challenge and Proof (the shared-token check of token.hpp).
// v4: Result carries a Record (named fields) where it carried a list of
//     doubles read by position.
inline constexpr std::uint16_t kProtocolVersion = 4;
inline constexpr std::size_t kHeaderBytes = 12;
// Largest payload accepted by default: far above any endpoint list or result,
// small enough that a corrupt length cannot make us allocate gigabytes.
inline constexpr std::uint32_t kMaxPayloadBytes = 16U << 20;
inline constexpr std::size_t kEndpointWireBytes = 56;
// A token challenge (Hello.challenge) and a Proof are this long: SHA-256's size.
inline constexpr std::size_t kTokenNonceBytes = 32;
inline constexpr std::size_t kTokenProofBytes = 32;

enum class MsgType : std::uint16_t {
  kHello = 1,
  kEndpointExchange = 2,
  kCommand = 3,
  kResult = 4,
  kBarrier = 5,
  kError = 6,
  kGoodbye = 7,
  kGather = 8,
  kKeepalive = 9,
  kProof = 10,
};

// First message each side sends on a new connection.
struct Hello {
  std::uint16_t protocol_version = kProtocolVersion;
  std::string build_version;  // fabench version of the sender, for the mismatch line
  std::string host_name;
  std::uint32_t rank = 0;
  std::uint32_t size = 0;  // world size the sender believes in (0: not part of a world)
  // v3, after the frozen fields: a fresh random nonce (kTokenNonceBytes) when
  // the sender holds a token, empty when it holds none (token.hpp).
  std::vector<std::uint8_t> challenge = {};

  friend bool operator==(const Hello&, const Hello&) = default;
};

// The endpoints (queue pairs and their memory) one rank offers its peers.
struct EndpointExchange {
  std::uint32_t rank = 0;
  std::vector<Endpoint> endpoints;

  friend bool operator==(const EndpointExchange&, const EndpointExchange&) = default;
};

// Leader -> follower: run one benchmark step with this many iterations.
struct Command {
  std::uint64_t sequence = 0;                               // echoed by the Result
  std::string benchmark;                                    // e.g. "write_lat"
  std::vector<std::pair<std::string, std::string>> params;  // e.g. {"msg_bytes", "64"}
  std::uint64_t iterations = 0;

  friend bool operator==(const Command&, const Command&) = default;
};

enum class ResultStatus : std::uint8_t {
  kOk = 0,
  kFailed = 1,       // the step ran and failed; `error` says why
  kUnsupported = 2,  // the follower cannot run this step (feature, size); `error` says why
};

// Follower -> leader: the outcome of the Command with the same sequence.
struct Result {
  std::uint64_t sequence = 0;
  ResultStatus status = ResultStatus::kOk;
  std::string error;           // one line, empty when kOk
  std::string json;            // free-form JSON document (may be empty)
  Record record;               // the benchmark's numbers, by name (record.hpp)

  friend bool operator==(const Result&, const Result&) = default;
};

// Rank -> rank 0 on entry, rank 0 -> rank on release.
struct Barrier {
  std::uint64_t epoch = 0;

  friend bool operator==(const Barrier&, const Barrier&) = default;
};

// One rank's contribution to a byte allgather (epoch counts collectives).
struct Gather {
  std::uint64_t epoch = 0;
  std::uint32_t rank = 0;
  std::vector<std::uint8_t> data;

  friend bool operator==(const Gather&, const Gather&) = default;
};

// The sender gives up; `text` is the one line to show the user.
struct Error {
  std::string text;

  friend bool operator==(const Error&, const Error&) = default;
};

// Orderly end of a conversation.
struct Goodbye {
  friend bool operator==(const Goodbye&, const Goodbye&) = default;
};

// "Still here": sent by a leader about once a second for as long as its
// conversation lasts, so a follower tells a stopped or vanished leader from a
// busy one within its timeout. Channel::recv consumes it (it only restarts
// the wait); no caller ever sees one.
struct Keepalive {
  friend bool operator==(const Keepalive&, const Keepalive&) = default;
};

// HMAC-SHA256 under the shared token over both Hellos (token.hpp): proves
// that the sender holds the token without sending it. Exactly
// kTokenProofBytes on the wire, no length field.
struct Proof {
  std::array<std::uint8_t, kTokenProofBytes> mac{};

  friend bool operator==(const Proof&, const Proof&) = default;
};

using Message =
    std::variant<Hello, EndpointExchange, Command, Result, Barrier, Error, Goodbye, Gather, Keepalive, Proof>;

struct FrameHeader {
  std::uint32_t magic = kMagic;
  std::uint16_t version = kProtocolVersion;
  MsgType type = MsgType::kGoodbye;
  std::uint32_t payload_bytes = 0;
};

// The fabench version this library was built from ("0.1.0"), sent in Hello (lib/base).
using fabench::build_version;

[[nodiscard]] MsgType type_of(const Message& msg) noexcept;
// "Hello", "Barrier", ...; "unknown type N" for values outside MsgType.
[[nodiscard]] std::string type_name(MsgType type);
[[nodiscard]] bool is_known_type(std::uint16_t raw) noexcept;

// The payload alone (no header).
[[nodiscard]] std::vector<std::uint8_t> encode_payload(const Message& msg);
// A whole frame. `version` other than kProtocolVersion is for tests that play an
// old or new peer. Throws CtrlError when the payload exceeds `max_payload_bytes`.
[[nodiscard]] std::vector<std::uint8_t> encode(const Message& msg, std::uint32_t max_payload_bytes = kMaxPayloadBytes,
                                               std::uint16_t version = kProtocolVersion);

// Checks magic, type and length (against `max_payload_bytes`). The version is
// checked by decode_payload, which knows whether the type is Hello.
[[nodiscard]] FrameHeader decode_header(std::span<const std::uint8_t> bytes,
                                        std::uint32_t max_payload_bytes = kMaxPayloadBytes);
// `payload` must be exactly header.payload_bytes long.
[[nodiscard]] Message decode_payload(const FrameHeader& header, std::span<const std::uint8_t> payload);
// A whole frame, exactly (no bytes before or after).
[[nodiscard]] Message decode(std::span<const std::uint8_t> frame, std::uint32_t max_payload_bytes = kMaxPayloadBytes);

// The fixed 56-byte little-endian form of an Endpoint, for callers that carry
// endpoints inside their own byte strings (Bootstrap::allgather).
void append_endpoint(std::vector<std::uint8_t>& out, const Endpoint& ep);
[[nodiscard]] Endpoint read_endpoint(std::span<const std::uint8_t> bytes);  // exactly 56 bytes

}  // namespace fabench::ctrl
