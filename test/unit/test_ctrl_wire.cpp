// Wire format: round trips of every message type, the exact byte layout, and
// rejection of everything that does not decode.
#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include <fmt/format.h>

#include "ctrl_support.hpp"
#include "fabench/ctrl/wire.hpp"

using namespace fabench::ctrl;
using fabench::Endpoint;
using fabench::test::catch_ctrl;

namespace {

Endpoint sample_endpoint(std::uint32_t seed) {
  Endpoint ep;
  ep.qpn = 0x123456 + seed;
  ep.psn = 0xABCDEF - seed;
  ep.qkey = 0x11111111U * (seed % 7 + 1);
  ep.lid = static_cast<std::uint16_t>(0xBEEF + seed);
  ep.port = 2;
  ep.mtu = 5;
  ep.gid_index = seed % 2 == 0 ? -1 : 3;
  for (std::size_t i = 0; i < ep.gid.size(); ++i) ep.gid[i] = static_cast<std::uint8_t>(0xF0 + i + seed);
  ep.addr = 0xFEDCBA9876543210ULL - seed;
  ep.rkey = 0xCAFEBABE;
  ep.length = (1ULL << 40) + seed;
  return ep;
}

std::vector<Message> one_of_each() {
  return {
      Hello{kProtocolVersion, "0.1.0-g1234abc", "host-b.example.org", 3, 8},
      Hello{kProtocolVersion, "0.1.0", "host-c", 0, 0, std::vector<std::uint8_t>(kTokenNonceBytes, 0xA5)},
      EndpointExchange{7, {sample_endpoint(0), sample_endpoint(1), sample_endpoint(2)}},
      EndpointExchange{0, {}},
      Command{42, "write_lat", {{"msg_bytes", "64"}, {"inline", ""}, {"", "empty key"}}, 20'000},
      Result{42,
             ResultStatus::kFailed,
             "IBV_WC_RETRY_EXC_ERR on qp 0x12",
             R"({"p50_ns": 1234.5})",
             Record{}
                 .set_f64("seconds", 1.5)
                 .set_u64("hash", 0xFEDCBA9876543210ULL)
                 .set_list("times", {-0.0, std::numeric_limits<double>::infinity(), 1e-300, 123456789.0})
                 .set_list("none", {})
                 .set_f64("", -0.0)},
      Result{43, ResultStatus::kUnsupported, "", "", {}},
      Barrier{0xFFFFFFFFFFFFFFFFULL},
      Error{"rank 3 (host-b) closed the connection \xE2\x80\x94 gone"},
      Goodbye{},
      Gather{5, 2, {0, 1, 2, 255, 0}},
      Gather{6, 0, {}},
      Keepalive{},
      Proof{{0x00, 0x01, 0xFE, 0xFF, 0x80, 0x7F, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80, 0x90, 0xA0,
             0xB0, 0xC0, 0xD0, 0xE0, 0xF0, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B}},
  };
}

void put_u16(std::vector<std::uint8_t>& f, std::size_t at, std::uint16_t v) {
  f[at] = static_cast<std::uint8_t>(v);
  f[at + 1] = static_cast<std::uint8_t>(v >> 8);
}
void put_u32(std::vector<std::uint8_t>& f, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) f[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
}

}  // namespace

TEST_CASE("every message type survives an encode/decode round trip", "[ctrl][wire]") {
  for (const auto& msg : one_of_each()) {
    INFO("type " << type_name(type_of(msg)));
    const auto frame = encode(msg);
    REQUIRE(frame.size() >= kHeaderBytes);
    const Message back = decode(frame);
    CHECK(type_of(back) == type_of(msg));
    CHECK(back == msg);
    // Header and payload decode separately to the same thing.
    const auto h = decode_header(frame);
    CHECK(h.type == type_of(msg));
    CHECK(h.payload_bytes == frame.size() - kHeaderBytes);
    CHECK(decode_payload(h, std::span(frame).subspan(kHeaderBytes)) == msg);
  }
}

TEST_CASE("doubles travel as their exact bits", "[ctrl][wire]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Result r{1, ResultStatus::kOk, "", "",
                 Record{}.set_f64("zero", -0.0).set_list("list", {nan, std::numeric_limits<double>::denorm_min()})};
  const auto back = std::get<Result>(decode(encode(r)));
  REQUIRE(back.record.size() == 2);
  CHECK(std::signbit(back.record.f64("zero")));
  REQUIRE(back.record.list("list").size() == 2);
  CHECK(std::isnan(back.record.list("list")[0]));
  CHECK(std::bit_cast<std::uint64_t>(back.record.list("list")[1]) == 1U);
}

TEST_CASE("a Result record travels by name, u64 fields exact", "[ctrl][wire]") {
  const Result r{7, ResultStatus::kOk, "", "",
                 Record{}.set_u64("hash", 0xFFFFFFFFFFFFFFFFULL).set_u64("wrong", (1ULL << 53) + 1).set_f64("seconds", 0.5)};
  const auto frame = encode(r);
  const auto back = std::get<Result>(decode(frame));
  CHECK(back == r);
  CHECK(back.record.u64("hash") == 0xFFFFFFFFFFFFFFFFULL);
  CHECK(back.record.u64("wrong") == (1ULL << 53) + 1);  // not representable as a double
  CHECK(back.record.names() == "hash, wrong, seconds");  // the writer's order
  // The payload after sequence, status, error and json: count, then name, kind tag, value.
  const std::size_t at = kHeaderBytes + 8 + 1 + 4 + 4;
  const std::vector<std::uint8_t> head(frame.begin() + static_cast<std::ptrdiff_t>(at),
                                       frame.begin() + static_cast<std::ptrdiff_t>(at + 4 + 4 + 4 + 1));
  CHECK(head == std::vector<std::uint8_t>{3, 0, 0, 0, 4, 0, 0, 0, 'h', 'a', 's', 'h', 1});
}

TEST_CASE("the frame layout is explicit little-endian", "[ctrl][wire]") {
  const auto frame = encode(Barrier{0x0102030405060708ULL});
  const std::vector<std::uint8_t> expected = {
      'F',  'B',  'C',  'P',                           // magic
      0x04, 0x00,                                      // version 4
      0x05, 0x00,                                      // type Barrier
      0x08, 0x00, 0x00, 0x00,                          // 8 payload bytes
      0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,  // epoch
  };
  CHECK(frame == expected);

  // Endpoint: 56 bytes, fields in declaration order, no padding.
  Endpoint ep;
  ep.qpn = 0x00ABCDEF;
  ep.psn = 0x00000102;
  ep.gid_index = -1;
  ep.gid[0] = 0xFE;
  ep.gid[15] = 0x01;
  ep.length = 0x1122334455667788ULL;
  std::vector<std::uint8_t> bytes;
  append_endpoint(bytes, ep);
  REQUIRE(bytes.size() == kEndpointWireBytes);
  CHECK(bytes[0] == 0xEF);
  CHECK(bytes[1] == 0xCD);
  CHECK(bytes[2] == 0xAB);
  CHECK(bytes[3] == 0x00);
  CHECK(bytes[4] == 0x02);
  CHECK(bytes[5] == 0x01);
  // gid_index -1 at offset 16, gid at 20..35, length in the last 8 bytes.
  CHECK(bytes[16] == 0xFF);
  CHECK(bytes[19] == 0xFF);
  CHECK(bytes[20] == 0xFE);
  CHECK(bytes[35] == 0x01);
  CHECK(bytes[48] == 0x88);
  CHECK(bytes[55] == 0x11);
  CHECK(read_endpoint(bytes) == ep);
}

TEST_CASE("a frame with bad magic is rejected", "[ctrl][wire]") {
  auto frame = encode(Goodbye{});
  frame[0] = 'G';
  const auto e = catch_ctrl([&] { (void)decode(frame); });
  CHECK(e.kind() == CtrlError::Kind::kMalformed);
  CHECK_THAT(e.what(), Catch::Contains("bad magic") && Catch::Contains("not a fabench control channel"));

  // An HTTP request hitting the port is the usual way this happens.
  const std::string http = "GET / HTTP/1.1\r\n\r\n";
  const std::vector<std::uint8_t> bytes(http.begin(), http.end());
  CHECK_THROWS_WITH(decode(bytes), Catch::Contains("bad magic"));
}

TEST_CASE("an unknown message type is rejected", "[ctrl][wire]") {
  auto frame = encode(Goodbye{});
  put_u16(frame, 6, 99);
  auto e = catch_ctrl([&] { (void)decode(frame); });
  CHECK(e.kind() == CtrlError::Kind::kMalformed);
  CHECK_THAT(e.what(), Catch::Contains("unknown message type 99"));
  put_u16(frame, 6, 0);
  CHECK_THROWS_WITH(decode(frame), Catch::Contains("unknown message type 0"));

  // From a peer of another version, the unknown type is a version problem.
  put_u16(frame, 4, kProtocolVersion + 1);
  put_u16(frame, 6, 99);
  e = catch_ctrl([&] { (void)decode(frame); });
  CHECK(e.kind() == CtrlError::Kind::kVersion);
  CHECK_THAT(e.what(), Catch::Contains(fmt::format("v{}", kProtocolVersion + 1)) &&
                           Catch::Contains(fmt::format("v{}", kProtocolVersion)));
}

TEST_CASE("oversized frames are rejected before any allocation", "[ctrl][wire]") {
  auto frame = encode(Goodbye{});
  put_u32(frame, 8, kMaxPayloadBytes + 1);
  auto e = catch_ctrl([&] { (void)decode_header(frame); });
  CHECK(e.kind() == CtrlError::Kind::kMalformed);
  CHECK_THAT(e.what(), Catch::Contains("exceeds the limit of 16777216 bytes"));
  put_u32(frame, 8, 0xFFFFFFFFU);
  CHECK_THROWS_AS(decode_header(frame), CtrlError);

  // Exactly at the limit is accepted (by the header check).
  put_u32(frame, 8, kMaxPayloadBytes);
  CHECK(decode_header(frame).payload_bytes == kMaxPayloadBytes);

  // A configured limit applies on both sides.
  const Gather big{1, 0, std::vector<std::uint8_t>(2000, 0xAB)};
  CHECK_THROWS_WITH(encode(big, 1024), Catch::Contains("frame limit is 1024 bytes"));
  const auto ok = encode(big);
  CHECK_THROWS_WITH(decode(ok, 1024), Catch::Contains("exceeds the limit of 1024 bytes"));
  CHECK(decode(ok, 4096) == Message(big));
}

TEST_CASE("every truncation of every message is rejected", "[ctrl][wire]") {
  for (const auto& msg : one_of_each()) {
    const auto frame = encode(msg);
    INFO("type " << type_name(type_of(msg)) << ", frame " << frame.size() << " bytes");
    for (std::size_t len = 0; len < frame.size(); ++len) {
      INFO("first " << len << " bytes");
      const std::span<const std::uint8_t> cut(frame.data(), len);
      CHECK_THROWS_AS(decode(cut), CtrlError);
    }
    // A payload cut short while the header still claims the original length.
    if (frame.size() > kHeaderBytes) {
      const auto h = decode_header(frame);
      const std::span<const std::uint8_t> payload(frame.data() + kHeaderBytes, frame.size() - kHeaderBytes - 1);
      CHECK_THROWS_WITH(decode_payload(h, payload), Catch::Contains("payload is"));
    }
  }
}

TEST_CASE("malformed payloads are rejected with the field named", "[ctrl][wire]") {
  SECTION("a string length beyond the payload") {
    auto frame = encode(Error{"hello"});
    put_u32(frame, kHeaderBytes, 0x7FFFFFFF);
    const auto e = catch_ctrl([&] { (void)decode(frame); });
    CHECK(e.kind() == CtrlError::Kind::kMalformed);
    CHECK_THAT(e.what(), Catch::Contains("Error") && Catch::Contains("truncated at text"));
  }
  SECTION("a list count beyond the payload is refused before reserving") {
    auto frame = encode(EndpointExchange{1, {sample_endpoint(0)}});
    put_u32(frame, kHeaderBytes + 4, 0xFFFFFFFFU);
    CHECK_THROWS_WITH(decode(frame), Catch::Contains("claims 4294967295 elements"));
  }
  SECTION("trailing bytes inside the payload") {
    auto frame = encode(Barrier{1});
    frame.push_back(0);
    put_u32(frame, 8, 9);
    CHECK_THROWS_WITH(decode(frame), Catch::Contains("1 trailing bytes"));
    auto bye = encode(Goodbye{});
    bye.push_back(0);
    put_u32(bye, 8, 1);
    CHECK_THROWS_WITH(decode(bye), Catch::Contains("Goodbye") && Catch::Contains("trailing"));
  }
  SECTION("bytes after the frame") {
    auto frame = encode(Barrier{1});
    frame.push_back(0);
    CHECK_THROWS_WITH(decode(frame), Catch::Contains("after the end of the frame"));
  }
  SECTION("a record field of an unknown kind, a name twice, a list longer than the payload") {
    const auto frame = encode(Result{1, ResultStatus::kOk, "", "", Record{}.set_f64("seconds", 1.0)});
    const std::size_t tag = kHeaderBytes + 8 + 1 + 4 + 4 + 4 + 4 + 7;
    REQUIRE(frame[tag] == 0);
    auto bad = frame;
    bad[tag] = 3;
    CHECK_THROWS_WITH(decode(bad), Catch::Contains("\"seconds\" of unknown kind 3"));
    auto twice = encode(Result{1, ResultStatus::kOk, "", "", Record{}.set_f64("aaaaaaa", 1.0).set_f64("seconds", 2.0)});
    std::memcpy(twice.data() + tag - 7, "seconds", 7);
    CHECK_THROWS_WITH(decode(twice), Catch::Contains("field \"seconds\" twice"));
    auto list = encode(Result{1, ResultStatus::kOk, "", "", Record{}.set_list("seconds", {1.0})});
    REQUIRE(list[tag] == 2);
    put_u32(list, tag + 1, 1000);
    CHECK_THROWS_WITH(decode(list), Catch::Contains("list count") && Catch::Contains("1000 elements"));
  }
  SECTION("an unknown result status") {
    auto frame = encode(Result{1, ResultStatus::kOk, "", "", {}});
    frame[kHeaderBytes + 8] = 7;
    CHECK_THROWS_WITH(decode(frame), Catch::Contains("unknown result status 7"));
  }
  SECTION("endpoint values no sender produces") {
    Endpoint ep = sample_endpoint(0);
    std::vector<std::uint8_t> bytes;
    append_endpoint(bytes, ep);
    auto bad = bytes;
    bad[7] = 0x01;  // psn bit 24
    CHECK_THROWS_WITH(read_endpoint(bad), Catch::Contains("psn") && Catch::Contains("24 bits"));
    bad = bytes;
    bad[15] = 9;  // mtu
    CHECK_THROWS_WITH(read_endpoint(bad), Catch::Contains("mtu 9"));
    CHECK_THROWS_WITH(read_endpoint(std::span(bytes).first(55)), Catch::Contains("55 bytes, expected 56"));
  }
}

TEST_CASE("frames of another protocol version", "[ctrl][wire]") {
  constexpr std::uint16_t kNewer = kProtocolVersion + 1;
  SECTION("a non-Hello message is refused with both versions named") {
    const auto frame = encode(Barrier{3}, kMaxPayloadBytes, kNewer);
    const auto e = catch_ctrl([&] { (void)decode(frame); });
    CHECK(e.kind() == CtrlError::Kind::kVersion);
    CHECK(std::string(e.what()) ==
          fmt::format("peer speaks fabench control protocol v{}, this build speaks v{}", kNewer, kProtocolVersion));
  }
  SECTION("a Hello decodes, even one a newer version extended") {
    Hello h{kNewer, "9.9.9", "future-host", 1, 2};
    auto frame = encode(h, kMaxPayloadBytes, kNewer);
    CHECK(std::get<Hello>(decode(frame)) == h);
    frame.push_back(0xAA);  // a field the newer version added
    put_u32(frame, 8, static_cast<std::uint32_t>(frame.size() - kHeaderBytes));
    CHECK(std::get<Hello>(decode(frame)) == h);
    // The same extension from our own version is malformed.
    auto ours = encode(Hello{kProtocolVersion, "x", "y", 0, 1});
    ours.push_back(0xAA);
    put_u32(ours, 8, static_cast<std::uint32_t>(ours.size() - kHeaderBytes));
    CHECK_THROWS_WITH(decode(ours), Catch::Contains("trailing"));
  }
  SECTION("a v2 Hello (no challenge field) decodes to its frozen fields") {
    std::vector<std::uint8_t> v2 = encode(Hello{2, "0.1.0", "old-host", 0, 0}, kMaxPayloadBytes, 2);
    v2.resize(v2.size() - 4);  // v2 ended after `size`: drop the challenge's length field
    put_u32(v2, 8, static_cast<std::uint32_t>(v2.size() - kHeaderBytes));
    const auto h = std::get<Hello>(decode(v2));
    CHECK(h.protocol_version == 2);
    CHECK(h.host_name == "old-host");
    CHECK(h.challenge.empty());
  }
}

TEST_CASE("the token challenge and Proof have fixed sizes", "[ctrl][wire][token]") {
  SECTION("Hello.challenge is a length then the nonce, after the frozen fields") {
    const Hello h{kProtocolVersion, "v", "h", 1, 2, std::vector<std::uint8_t>(kTokenNonceBytes, 0x5A)};
    const auto payload = encode_payload(h);
    const auto without = encode_payload(Hello{kProtocolVersion, "v", "h", 1, 2});
    REQUIRE(payload.size() == without.size() + kTokenNonceBytes);
    CHECK(std::equal(without.begin(), without.end() - 4, payload.begin()));  // the frozen fields
    CHECK(payload[without.size() - 4] == kTokenNonceBytes);                  // the length field
    CHECK(payload.back() == 0x5A);
  }
  SECTION("a challenge of any other length is malformed") {
    for (std::size_t n : {1U, 16U, 31U, 33U, 64U}) {
      INFO(n << " bytes");
      const auto frame = encode(Hello{kProtocolVersion, "v", "h", 0, 0, std::vector<std::uint8_t>(n, 1)});
      const auto e = catch_ctrl([&] { (void)decode(frame); });
      CHECK(e.kind() == CtrlError::Kind::kMalformed);
      CHECK_THAT(e.what(), Catch::Contains(fmt::format("a token challenge of {} bytes", n)));
    }
  }
  SECTION("a Proof is exactly 32 bytes") {
    const auto frame = encode(Proof{});
    CHECK(frame.size() == kHeaderBytes + kTokenProofBytes);
    auto longer = frame;
    longer.push_back(0);
    put_u32(longer, 8, kTokenProofBytes + 1);
    CHECK_THROWS_WITH(decode(longer), Catch::Contains("Proof") && Catch::Contains("trailing"));
    auto shorter = frame;
    shorter.pop_back();
    put_u32(shorter, 8, kTokenProofBytes - 1);
    CHECK_THROWS_WITH(decode(shorter), Catch::Contains("Proof") && Catch::Contains("truncated at mac"));
  }
}

TEST_CASE("random corruption is rejected where it must be, and what still decodes is exact", "[ctrl][wire]") {
  // Bit flips anywhere in a frame. A frame whose magic or length bytes changed
  // must be rejected (the length no longer matches the bytes that follow). A
  // frame that still decodes must be accounted for exactly: at our version it
  // re-encodes to the corrupted bytes (the decoder neither skipped nor repaired
  // a byte); at another version only a Hello decodes. Only CtrlError comes out.
  std::mt19937 rng(12345);
  const auto msgs = one_of_each();
  int decoded = 0;
  int rejected = 0;
  int framing_hit = 0;
  int wrong = 0;
  std::string first_wrong;
  for (int round = 0; round < 20'000; ++round) {
    const auto original = encode(msgs[static_cast<std::size_t>(round) % msgs.size()]);
    auto frame = original;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < flips; ++i) {
      frame[rng() % frame.size()] ^= static_cast<std::uint8_t>(1U << (rng() % 8));
    }
    const bool framing = !std::equal(frame.begin(), frame.begin() + 4, original.begin()) ||
                         !std::equal(frame.begin() + 8, frame.begin() + 12, original.begin() + 8);
    framing_hit += framing ? 1 : 0;
    std::string problem;
    try {
      const Message m = decode(frame);
      ++decoded;
      const auto version = static_cast<std::uint16_t>(frame[4] | (frame[5] << 8));
      if (framing) {
        problem = "a frame with a changed magic or length decoded";
      } else if (version == kProtocolVersion && encode(m) != frame) {
        problem = "decoded, but does not re-encode to its bytes";
      } else if (version != kProtocolVersion && !std::holds_alternative<Hello>(m)) {
        problem = fmt::format("a v{} {} decoded", version, type_name(type_of(m)));
      }
    } catch (const CtrlError&) {
      ++rejected;
    }
    if (!problem.empty() && wrong++ == 0) first_wrong = fmt::format("round {}: {}", round, problem);
  }
  INFO(first_wrong);
  CHECK(wrong == 0);
  // Both outcomes happen often: the flips reach the framing, and flips in
  // string bytes, numbers and doubles decode to other valid messages.
  CHECK(framing_hit > 5000);
  CHECK(rejected > framing_hit);
  CHECK(decoded > 2000);
}
