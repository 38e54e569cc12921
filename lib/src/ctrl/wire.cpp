#include "fabench/ctrl/wire.hpp"

#include <fmt/format.h>

#include "wire_codec.hpp"

namespace fabench::ctrl {
namespace {

using detail::malformed;
using detail::Reader;
using detail::Writer;

void write_endpoint(Writer& w, const Endpoint& ep) {
  w.uint(ep.qpn);
  w.uint(ep.psn);
  w.uint(ep.qkey);
  w.uint(ep.lid);
  w.uint(ep.port);
  w.uint(ep.mtu);
  w.i32(ep.gid_index);
  for (auto b : ep.gid) w.uint(b);
  w.uint(ep.addr);
  w.uint(ep.rkey);
  w.uint(ep.length);
}

Endpoint read_endpoint_fields(Reader& r) {
  Endpoint ep;
  ep.qpn = r.uint<std::uint32_t>("endpoint qpn");
  ep.psn = r.uint<std::uint32_t>("endpoint psn");
  ep.qkey = r.uint<std::uint32_t>("endpoint qkey");
  ep.lid = r.uint<std::uint16_t>("endpoint lid");
  ep.port = r.uint<std::uint8_t>("endpoint port");
  ep.mtu = r.uint<std::uint8_t>("endpoint mtu");
  ep.gid_index = r.i32("endpoint gid_index");
  for (auto& b : ep.gid) b = r.uint<std::uint8_t>("endpoint gid");
  ep.addr = r.uint<std::uint64_t>("endpoint addr");
  ep.rkey = r.uint<std::uint32_t>("endpoint rkey");
  ep.length = r.uint<std::uint64_t>("endpoint length");
  // Values no sender produces: QPNs and PSNs are 24-bit, MTUs are enum ibv_mtu (1..5, 0 unset).
  if (ep.qpn > 0xFFFFFF) malformed(fmt::format("{}: endpoint qpn {:#x} exceeds 24 bits", r.msg(), ep.qpn));
  if (ep.psn > 0xFFFFFF) malformed(fmt::format("{}: endpoint psn {:#x} exceeds 24 bits", r.msg(), ep.psn));
  if (ep.mtu > 5) malformed(fmt::format("{}: endpoint mtu {} is not an ibv_mtu value", r.msg(), ep.mtu));
  if (ep.gid_index < -1) malformed(fmt::format("{}: endpoint gid_index {}", r.msg(), ep.gid_index));
  return ep;
}

// Hello's first five fields are frozen across protocol versions (see wire.hpp).
void write_body(Writer& w, const Hello& m) {
  w.uint(m.protocol_version);
  w.str(m.build_version, "Hello build_version");
  w.str(m.host_name, "Hello host_name");
  w.uint(m.rank);
  w.uint(m.size);
  w.bytes(m.challenge, "Hello challenge");
}
void write_body(Writer& w, const EndpointExchange& m) {
  w.uint(m.rank);
  w.length(m.endpoints.size(), "EndpointExchange endpoints");
  for (const auto& ep : m.endpoints) write_endpoint(w, ep);
}
void write_body(Writer& w, const Command& m) {
  w.uint(m.sequence);
  w.str(m.benchmark, "Command benchmark");
  w.length(m.params.size(), "Command params");
  for (const auto& [k, v] : m.params) {
    w.str(k, "Command param key");
    w.str(v, "Command param value");
  }
  w.uint(m.iterations);
}
// A Record: the field count, then per field its name, kind tag and value.
void write_record(Writer& w, const Record& rec) {
  w.length(rec.size(), "Result record");
  for (const auto& f : rec.fields()) {
    w.str(f.name, "Result field name");
    w.uint(static_cast<std::uint8_t>(f.value.index()));
    if (const auto* d = std::get_if<double>(&f.value)) {
      w.f64(*d);
    } else if (const auto* u = std::get_if<std::uint64_t>(&f.value)) {
      w.uint(*u);
    } else {
      const auto& list = std::get<std::vector<double>>(f.value);
      w.length(list.size(), "Result field list");
      for (double v : list) w.f64(v);
    }
  }
}

void write_body(Writer& w, const Result& m) {
  w.uint(m.sequence);
  w.uint(static_cast<std::uint8_t>(m.status));
  w.str(m.error, "Result error");
  w.str(m.json, "Result json");
  write_record(w, m.record);
}
void write_body(Writer& w, const Barrier& m) { w.uint(m.epoch); }
void write_body(Writer& w, const Gather& m) {
  w.uint(m.epoch);
  w.uint(m.rank);
  w.bytes(m.data, "Gather data");
}
void write_body(Writer& w, const Error& m) { w.str(m.text, "Error text"); }
void write_body(Writer& /*w*/, const Goodbye& /*m*/) {}
void write_body(Writer& /*w*/, const Keepalive& /*m*/) {}
void write_body(Writer& w, const Proof& m) {
  for (auto b : m.mac) w.uint(b);
}

// The frozen fields at any version; what follows them only at ours (another
// version's Hello is decoded just far enough to name both versions).
Hello read_hello(Reader& r, bool same_version) {
  Hello m;
  m.protocol_version = r.uint<std::uint16_t>("protocol_version");
  m.build_version = r.str("build_version");
  m.host_name = r.str("host_name");
  m.rank = r.uint<std::uint32_t>("rank");
  m.size = r.uint<std::uint32_t>("size");
  if (!same_version) return m;
  m.challenge = r.bytes("challenge");
  if (!m.challenge.empty() && m.challenge.size() != kTokenNonceBytes) {
    malformed(fmt::format("{}: a token challenge of {} bytes (expected none or {})", r.msg(), m.challenge.size(),
                          kTokenNonceBytes));
  }
  return m;
}

// A Record as write_record wrote it: known kinds only, each name once.
Record read_record(Reader& r) {
  Record rec;
  const auto n = r.count("field count", 4 + 1 + 4);  // an empty name, a tag, an empty list at least
  for (std::size_t i = 0; i < n; ++i) {
    std::string name = r.str("field name");
    if (rec.has(name)) malformed(fmt::format("{}: field \"{}\" twice", r.msg(), name));
    const auto kind = r.uint<std::uint8_t>("field kind");
    switch (kind) {
      case 0: rec.set_f64(name, r.f64("f64 field")); break;
      case 1: rec.set_u64(name, r.uint<std::uint64_t>("u64 field")); break;
      case 2: {
        const auto k = r.count("list count", 8);
        std::vector<double> list;
        list.reserve(k);
        for (std::size_t j = 0; j < k; ++j) list.push_back(r.f64("list value"));
        rec.set_list(name, std::move(list));
        break;
      }
      default: malformed(fmt::format("{}: field \"{}\" of unknown kind {}", r.msg(), name, kind));
    }
  }
  return rec;
}

Message read_body(MsgType type, Reader& r, bool same_version) {
  switch (type) {
    case MsgType::kHello: return read_hello(r, same_version);
    case MsgType::kEndpointExchange: {
      EndpointExchange m;
      m.rank = r.uint<std::uint32_t>("rank");
      const auto n = r.count("endpoint count", kEndpointWireBytes);
      m.endpoints.reserve(n);
      for (std::size_t i = 0; i < n; ++i) m.endpoints.push_back(read_endpoint_fields(r));
      return m;
    }
    case MsgType::kCommand: {
      Command m;
      m.sequence = r.uint<std::uint64_t>("sequence");
      m.benchmark = r.str("benchmark");
      const auto n = r.count("param count", 8);  // two empty strings at least
      m.params.reserve(n);
      for (std::size_t i = 0; i < n; ++i) {
        auto key = r.str("param key");
        auto value = r.str("param value");
        m.params.emplace_back(std::move(key), std::move(value));
      }
      m.iterations = r.uint<std::uint64_t>("iterations");
      return m;
    }
    case MsgType::kResult: {
      Result m;
      m.sequence = r.uint<std::uint64_t>("sequence");
      const auto status = r.uint<std::uint8_t>("status");
      if (status > static_cast<std::uint8_t>(ResultStatus::kUnsupported)) {
        malformed(fmt::format("{}: unknown result status {}", r.msg(), status));
      }
      m.status = static_cast<ResultStatus>(status);
      m.error = r.str("error");
      m.json = r.str("json");
      m.record = read_record(r);
      return m;
    }
    case MsgType::kBarrier: return Barrier{r.uint<std::uint64_t>("epoch")};
    case MsgType::kGather: {
      Gather m;
      m.epoch = r.uint<std::uint64_t>("epoch");
      m.rank = r.uint<std::uint32_t>("rank");
      m.data = r.bytes("data");
      return m;
    }
    case MsgType::kError: return Error{r.str("text")};
    case MsgType::kGoodbye: return Goodbye{};
    case MsgType::kKeepalive: return Keepalive{};
    case MsgType::kProof: {
      Proof m;
      for (auto& b : m.mac) b = r.uint<std::uint8_t>("mac");
      return m;
    }
  }
  malformed(fmt::format("unknown message type {}", static_cast<unsigned>(type)));
}

}  // namespace

MsgType type_of(const Message& msg) noexcept {
  struct V {
    MsgType operator()(const Hello&) const { return MsgType::kHello; }
    MsgType operator()(const EndpointExchange&) const { return MsgType::kEndpointExchange; }
    MsgType operator()(const Command&) const { return MsgType::kCommand; }
    MsgType operator()(const Result&) const { return MsgType::kResult; }
    MsgType operator()(const Barrier&) const { return MsgType::kBarrier; }
    MsgType operator()(const Error&) const { return MsgType::kError; }
    MsgType operator()(const Goodbye&) const { return MsgType::kGoodbye; }
    MsgType operator()(const Gather&) const { return MsgType::kGather; }
    MsgType operator()(const Keepalive&) const { return MsgType::kKeepalive; }
    MsgType operator()(const Proof&) const { return MsgType::kProof; }
  };
  return std::visit(V{}, msg);
}

bool is_known_type(std::uint16_t raw) noexcept {
  return raw >= static_cast<std::uint16_t>(MsgType::kHello) && raw <= static_cast<std::uint16_t>(MsgType::kProof);
}

std::string type_name(MsgType type) {
  switch (type) {
    case MsgType::kHello: return "Hello";
    case MsgType::kEndpointExchange: return "EndpointExchange";
    case MsgType::kCommand: return "Command";
    case MsgType::kResult: return "Result";
    case MsgType::kBarrier: return "Barrier";
    case MsgType::kError: return "Error";
    case MsgType::kGoodbye: return "Goodbye";
    case MsgType::kGather: return "Gather";
    case MsgType::kKeepalive: return "Keepalive";
    case MsgType::kProof: return "Proof";
  }
  return fmt::format("unknown type {}", static_cast<unsigned>(type));
}

std::vector<std::uint8_t> encode_payload(const Message& msg) {
  std::vector<std::uint8_t> out;
  Writer w(out);
  std::visit([&](const auto& m) { write_body(w, m); }, msg);
  return out;
}

Message decode_payload(const FrameHeader& header, std::span<const std::uint8_t> payload) {
  const bool same_version = header.version == kProtocolVersion;
  if (!same_version && header.type != MsgType::kHello) {
    throw CtrlError(CtrlError::Kind::kVersion,
                    fmt::format("peer speaks fabench control protocol v{}, this build speaks v{}", header.version,
                                kProtocolVersion));
  }
  const std::string name = type_name(header.type);
  if (payload.size() != header.payload_bytes) {
    malformed(fmt::format("{}: payload is {} bytes, header says {}", name, payload.size(), header.payload_bytes));
  }
  Reader r(payload, name);
  Message m = read_body(header.type, r, same_version);
  // Another version may extend Hello at the end; our own must match exactly.
  if (same_version) r.finish();
  return m;
}

void append_endpoint(std::vector<std::uint8_t>& out, const Endpoint& ep) {
  Writer w(out);
  write_endpoint(w, ep);
}

Endpoint read_endpoint(std::span<const std::uint8_t> bytes) {
  if (bytes.size() != kEndpointWireBytes) {
    malformed(fmt::format("endpoint is {} bytes, expected {}", bytes.size(), kEndpointWireBytes));
  }
  Reader r(bytes, "Endpoint");
  return read_endpoint_fields(r);
}

}  // namespace fabench::ctrl
