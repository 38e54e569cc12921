// VerbsError, the user-facing hints and the text of failed completions.
#include "fabench/verbs/error.hpp"

#include <sys/resource.h>

#include <cstring>
#include <utility>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "fabench/verbs/handle.hpp"

namespace fabench::verbs {

std::string error_text(int error_number) {
  char buf[256];
  // GNU strerror_r returns a pointer to the text (maybe not buf); the XSI one an int.
#if defined(_GNU_SOURCE) && !defined(__APPLE__)
  const char* text = strerror_r(error_number, buf, sizeof buf);
  return text != nullptr ? std::string(text) : fmt::format("error {}", error_number);
#else
  if (strerror_r(error_number, buf, sizeof buf) != 0) return fmt::format("error {}", error_number);
  return std::string(buf);
#endif
}

std::string format_verbs_error(std::string_view verb, int error_number, std::string_view hint) {
  std::string msg = fmt::format("{}: {}", verb, error_text(error_number));
  if (!hint.empty()) msg += fmt::format(" ({})", hint);
  return msg;
}

VerbsError::VerbsError(std::string verb, int error_number, std::string hint)
    : RunError(format_verbs_error(verb, error_number, hint)),
      verb_(std::move(verb)),
      error_number_(error_number),
      hint_(std::move(hint)) {}

VerbsError::VerbsError(Preformatted, std::string what, std::string verb, ibv_wc_status status)
    : RunError(std::move(what)), verb_(std::move(verb)), wc_status_(status) {}

VerbsError VerbsError::from_completion(const ibv_wc& wc, std::string text) {
  return VerbsError(Preformatted{}, std::move(text), "ibv_poll_cq", wc.status);
}

std::string no_device_hint() { return "no RDMA device; for Soft-RoCE: rdma link add rxe0 type rxe netdev eth0"; }

std::string format_bytes(std::uint64_t bytes) {
  if (bytes == static_cast<std::uint64_t>(RLIM_INFINITY)) return "unlimited";
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int unit = 0;
  double value = static_cast<double>(bytes);
  while (value >= 1024.0 && unit < 5) {
    value /= 1024.0;
    ++unit;
  }
  if (value == static_cast<double>(static_cast<std::uint64_t>(value))) {
    return fmt::format("{} {}", static_cast<std::uint64_t>(value), kUnits[unit]);
  }
  return fmt::format("{:.1f} {}", value, kUnits[unit]);
}

std::string memlock_hint(std::uint64_t limit_bytes) {
  if (limit_bytes == static_cast<std::uint64_t>(RLIM_INFINITY)) {
    // Not the memlock limit then: the device ran out of translation resources.
    return "locked memory limit unlimited; the device is out of memory-registration resources";
  }
  return fmt::format("locked memory limit {}; raise ulimit -l", format_bytes(limit_bytes));
}

std::string memlock_hint() {
  rlimit lim{};
  if (getrlimit(RLIMIT_MEMLOCK, &lim) != 0) return "locked memory limit unknown; raise ulimit -l";
  return memlock_hint(static_cast<std::uint64_t>(lim.rlim_cur));
}

std::string wc_opcode_name(ibv_wc_opcode opcode) {
  switch (opcode) {
    case IBV_WC_SEND: return "SEND";
    case IBV_WC_RDMA_WRITE: return "RDMA_WRITE";
    case IBV_WC_RDMA_READ: return "RDMA_READ";
    case IBV_WC_COMP_SWAP: return "COMP_SWAP";
    case IBV_WC_FETCH_ADD: return "FETCH_ADD";
    case IBV_WC_BIND_MW: return "BIND_MW";
    case IBV_WC_LOCAL_INV: return "LOCAL_INV";
    case IBV_WC_TSO: return "TSO";
    case IBV_WC_ATOMIC_WRITE: return "ATOMIC_WRITE";
    case IBV_WC_RECV: return "RECV";
    case IBV_WC_RECV_RDMA_WITH_IMM: return "RECV_RDMA_WITH_IMM";
    case IBV_WC_TM_ADD: return "TM_ADD";
    case IBV_WC_TM_DEL: return "TM_DEL";
    case IBV_WC_TM_SYNC: return "TM_SYNC";
    case IBV_WC_TM_RECV: return "TM_RECV";
    case IBV_WC_TM_NO_TAG: return "TM_NO_TAG";
    case IBV_WC_DRIVER1: return "DRIVER1";
    case IBV_WC_DRIVER2: return "DRIVER2";
    case IBV_WC_DRIVER3: return "DRIVER3";
  }
  return fmt::format("opcode {:#x}", static_cast<unsigned>(opcode));
}

std::string wr_opcode_name(ibv_wr_opcode opcode) {
  switch (opcode) {
    case IBV_WR_RDMA_WRITE: return "RDMA_WRITE";
    case IBV_WR_RDMA_WRITE_WITH_IMM: return "RDMA_WRITE_WITH_IMM";
    case IBV_WR_SEND: return "SEND";
    case IBV_WR_SEND_WITH_IMM: return "SEND_WITH_IMM";
    case IBV_WR_RDMA_READ: return "RDMA_READ";
    case IBV_WR_ATOMIC_CMP_AND_SWP: return "ATOMIC_CMP_AND_SWP";
    case IBV_WR_ATOMIC_FETCH_AND_ADD: return "ATOMIC_FETCH_AND_ADD";
    case IBV_WR_LOCAL_INV: return "LOCAL_INV";
    case IBV_WR_BIND_MW: return "BIND_MW";
    case IBV_WR_SEND_WITH_INV: return "SEND_WITH_INV";
    case IBV_WR_TSO: return "TSO";
    case IBV_WR_DRIVER1: return "DRIVER1";
    case IBV_WR_ATOMIC_WRITE: return "ATOMIC_WRITE";
  }
  return fmt::format("opcode {:#x}", static_cast<unsigned>(opcode));
}

std::string format_completion(const ibv_wc& wc, std::string_view qp_description) {
  const char* status = ibv_wc_status_str(wc.status);
  return fmt::format("completion {} on {}: {} (status {}, vendor_err {:#x}); wr_id {:#x}, opcode {}, qp_num {:#x}",
                     wc.status == IBV_WC_SUCCESS ? "unexpected" : "failed", qp_description,
                     status != nullptr ? status : "unknown status", static_cast<int>(wc.status), wc.vendor_err,
                     wc.wr_id, wc_opcode_name(wc.opcode), wc.qp_num);
}

VerbsError completion_error(const ibv_wc& wc, std::string_view qp_description) {
  return VerbsError::from_completion(wc, format_completion(wc, qp_description));
}

void log_destroy_failure(std::string_view call, int rc, std::string_view what) noexcept {
  try {
    spdlog::error("{}{}{} failed: {}", call, what.empty() ? "" : " of ", what, error_text(rc < 0 ? -rc : rc));
  } catch (...) {  // a log line is not worth a terminate
  }
}

}  // namespace fabench::verbs
