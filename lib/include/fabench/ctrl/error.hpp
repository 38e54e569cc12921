// CtrlError: the one exception type of the control plane (wire format,
// channel, bootstrap). Its text is meant for the user as is: one line that
// names the peer (rank, host, address) and what went wrong.
#pragma once

#include <stdexcept>
#include <string>

namespace fabench::ctrl {

class CtrlError : public std::runtime_error {
 public:
  // What went wrong, for callers that react differently (a follower that
  // loses its leader waits for the next one; a timeout may be retried).
  enum class Kind {
    kMalformed,  // a frame or payload that does not decode (bad magic, length, field)
    kVersion,    // the peer speaks another protocol version
    kProtocol,   // a well-formed message the protocol did not expect here
    kTimeout,    // a peer silent past the timeout
    kClosed,     // a peer closed the connection (or reset it)
    kNetwork,    // resolve, bind, connect and other socket failures
    kPeerError,  // the peer sent an Error message
    kConfig,     // bad rank/size/address/port from flags or environment
    kAuth,       // the shared-token check failed: a token missing on one end, or another token
  };

  CtrlError(Kind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}

  [[nodiscard]] Kind kind() const noexcept { return kind_; }

 private:
  Kind kind_;
};

// Throws CtrlError kConfig: a bad setting (rank, size, address, port, token) named in `what`.
[[noreturn]] inline void config_error(const std::string& what) { throw CtrlError(CtrlError::Kind::kConfig, what); }

}  // namespace fabench::ctrl
