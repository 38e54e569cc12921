// VerbsError: the one exception type of lib/verbs, plus the two wrappers that
// turn rdma-core's two error shapes into it (check_ptr for verbs that return a
// pointer and set errno, check_rc for verbs that *return* the error number),
// the hints for errors a user can cause, and the text of a failed completion.
//
// Setup code throws VerbsError; the data path (post/poll) never throws and
// returns codes instead, which callers turn into a VerbsError after the loop.
#pragma once

#include <cerrno>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include <infiniband/verbs.h>

#include "fabench/base/error.hpp"

namespace fabench::verbs {

// A RunError (base/error.hpp): a verb that failed ends the run with exit status 1.
class VerbsError : public RunError {
 public:
  // what() is "<verb>: <strerror(error_number)>" followed by " (<hint>)" when
  // there is a hint, e.g. "ibv_reg_mr: Cannot allocate memory (locked memory
  // limit 64 KiB; raise ulimit -l)".
  VerbsError(std::string verb, int error_number, std::string hint = {});

  // A failed work completion: what() is the preformatted completion text.
  static VerbsError from_completion(const ibv_wc& wc, std::string text);

  [[nodiscard]] const std::string& verb() const noexcept { return verb_; }
  [[nodiscard]] int error_number() const noexcept { return error_number_; }
  [[nodiscard]] const std::string& hint() const noexcept { return hint_; }
  // IBV_WC_SUCCESS unless this error came from a failed completion.
  [[nodiscard]] ibv_wc_status wc_status() const noexcept { return wc_status_; }

 private:
  struct Preformatted {};
  VerbsError(Preformatted, std::string what, std::string verb, ibv_wc_status status);

  std::string verb_;
  int error_number_ = 0;
  std::string hint_;
  ibv_wc_status wc_status_ = IBV_WC_SUCCESS;
};

// Text of an error number ("Cannot allocate memory"); thread-safe.
[[nodiscard]] std::string error_text(int error_number);

// The message VerbsError builds; exposed so tests can check the format.
[[nodiscard]] std::string format_verbs_error(std::string_view verb, int error_number, std::string_view hint);

// int-returning verbs return the error number itself (rdma-core convention);
// a few providers return it negated. errno is never read here: after e.g.
// ibv_post_send it holds whatever an unrelated earlier call left in it.
inline void check_rc(int rc, std::string_view verb, std::string_view hint = {}) {
  if (rc != 0) {
    throw VerbsError(std::string(verb), rc < 0 ? -rc : rc, std::string(hint));
  }
}

// Pointer-returning verbs signal failure with nullptr and set errno. Some
// providers forget errno; EIO then stands in for "failed, reason unknown".
template <class T>
T* check_ptr(T* ptr, std::string_view verb, std::string_view hint = {}) {
  if (ptr == nullptr) {
    const int err = errno;
    throw VerbsError(std::string(verb), err != 0 ? err : EIO, std::string(hint));
  }
  return ptr;
}

// --- hints for errors the user can fix ------------------------------------

// "no RDMA device; for Soft-RoCE: rdma link add rxe0 type rxe netdev eth0"
[[nodiscard]] std::string no_device_hint();

// ENOMEM from ibv_reg_mr is nearly always RLIMIT_MEMLOCK. limit_bytes is the
// soft limit (RLIM_INFINITY for unlimited): "locked memory limit 64 KiB; raise
// ulimit -l".
[[nodiscard]] std::string memlock_hint(std::uint64_t limit_bytes);
// Same, reading getrlimit(RLIMIT_MEMLOCK) of this process.
[[nodiscard]] std::string memlock_hint();

// "64 KiB", "8 MiB", "1.5 GiB", "unlimited"
[[nodiscard]] std::string format_bytes(std::uint64_t bytes);

// --- failed completions --------------------------------------------------

// "RDMA_WRITE", "RECV_RDMA_WITH_IMM", ... ; "opcode 0x.." when unknown.
[[nodiscard]] std::string wc_opcode_name(ibv_wc_opcode opcode);
// "RDMA_WRITE", "ATOMIC_FETCH_AND_ADD", ... for posted work requests.
[[nodiscard]] std::string wr_opcode_name(ibv_wr_opcode opcode);

// One line for a failed (or unexpected) completion, e.g.
//   "completion failed on RC qp 0x11 (rxe0 port 1): remote access error
//    (status 10, vendor_err 0x0); wr_id 0x2a, opcode RDMA_WRITE, qp_num 0x11"
// qp_description names the queue pair as the caller knows it. The IB spec
// leaves wc.opcode undefined for failed completions (only wr_id, status,
// qp_num and vendor_err are valid), so identify the request by wr_id.
[[nodiscard]] std::string format_completion(const ibv_wc& wc, std::string_view qp_description);
[[nodiscard]] VerbsError completion_error(const ibv_wc& wc, std::string_view qp_description);

}  // namespace fabench::verbs
