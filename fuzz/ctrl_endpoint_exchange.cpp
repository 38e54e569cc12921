// The EndpointExchange payload decoder (ctrl_payload.hpp), and read_endpoint(), the
// 56-byte endpoint form that World reads out of Bootstrap::route() pieces:
// it decodes or throws CtrlError, and what decodes re-encodes to its bytes.
#include "ctrl_payload.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fabench::ctrl;
  if (size >= kEndpointWireBytes) {
    const auto ep_bytes = fuzz::bytes(data, kEndpointWireBytes);
    try {
      const auto ep = read_endpoint(ep_bytes);
      std::vector<std::uint8_t> out;
      append_endpoint(out, ep);
      FUZZ_CHECK(out == fuzz::vec(ep_bytes));
    } catch (const CtrlError& e) {
      FUZZ_CHECK(e.kind() == CtrlError::Kind::kMalformed);
    }
  }
  return fuzz::decode_one_type<MsgType::kEndpointExchange>(data, size);
}
