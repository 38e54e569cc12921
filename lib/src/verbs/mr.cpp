// HostBuffer (mmap) and MemoryRegion (ibv_reg_mr / ibv_dereg_mr).
#include "fabench/verbs/mr.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "fabench/verbs/error.hpp"
#include "fabench/verbs/pd.hpp"

namespace fabench::verbs {
namespace {

std::size_t huge_page_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  while (in >> key) {
    if (key == "Hugepagesize:") {
      std::size_t kib = 0;
      if (in >> kib && kib > 0) return kib * 1024;
      break;
    }
    in.ignore(1 << 10, '\n');
  }
  return std::size_t{2} << 20;
}

std::size_t round_up(std::size_t n, std::size_t unit) { return (n + unit - 1) / unit * unit; }

std::string access_names(int access) {
  std::string out;
  auto add = [&](int flag, const char* name) {
    if ((access & flag) != 0) out += out.empty() ? name : fmt::format("|{}", name);
  };
  add(IBV_ACCESS_LOCAL_WRITE, "LOCAL_WRITE");
  add(IBV_ACCESS_REMOTE_WRITE, "REMOTE_WRITE");
  add(IBV_ACCESS_REMOTE_READ, "REMOTE_READ");
  add(IBV_ACCESS_REMOTE_ATOMIC, "REMOTE_ATOMIC");
  add(IBV_ACCESS_MW_BIND, "MW_BIND");
  add(IBV_ACCESS_ZERO_BASED, "ZERO_BASED");
  add(IBV_ACCESS_ON_DEMAND, "ON_DEMAND");
  add(IBV_ACCESS_HUGETLB, "HUGETLB");
  add(IBV_ACCESS_RELAXED_ORDERING, "RELAXED_ORDERING");
  return out.empty() ? "none" : out;
}

}  // namespace

// ---------------------------------------------------------------- HostBuffer

HostBuffer::HostBuffer(std::size_t bytes, HugePages huge) : size_(bytes) {
  if (bytes == 0) throw VerbsError("mmap", EINVAL, "HostBuffer of 0 bytes");
  if (huge != HugePages::kNo) {
    const std::size_t len = round_up(bytes, huge_page_bytes());
    void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
    if (p != MAP_FAILED) {
      data_ = static_cast<std::byte*>(p);
      mapped_ = len;
      huge_ = true;
      return;
    }
    const int err = errno;
    const std::string hint = fmt::format("no huge pages for {}; reserve some: echo N > /proc/sys/vm/nr_hugepages",
                                         format_bytes(len));
    if (huge == HugePages::kRequire) throw VerbsError("mmap(MAP_HUGETLB)", err, hint);
    spdlog::warn("mmap(MAP_HUGETLB): {} ({}); using normal pages", error_text(err), hint);
  }
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t len = round_up(bytes, page);
  // Anonymous mappings are page-aligned and zero-filled by the kernel.
  void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw VerbsError("mmap", errno, fmt::format("{} host buffer", format_bytes(len)));
  data_ = static_cast<std::byte*>(p);
  mapped_ = len;
}

HostBuffer::~HostBuffer() { reset(); }

HostBuffer::HostBuffer(HostBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      mapped_(std::exchange(other.mapped_, 0)),
      huge_(std::exchange(other.huge_, false)) {}

HostBuffer& HostBuffer::operator=(HostBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    mapped_ = std::exchange(other.mapped_, 0);
    huge_ = std::exchange(other.huge_, false);
  }
  return *this;
}

void HostBuffer::reset() noexcept {
  if (data_ != nullptr && munmap(data_, mapped_) != 0) {
    spdlog::error("munmap({} bytes) failed: {}", mapped_, error_text(errno));
  }
  data_ = nullptr;
  size_ = mapped_ = 0;
  huge_ = false;
}

// -------------------------------------------------------------- MemoryRegion

MemoryRegion::MemoryRegion(const ProtectionDomain& pd, void* addr, std::size_t bytes, int access) : access_(access) {
  errno = 0;
  mr_ = Handle<ibv_mr>(ibv_reg_mr(pd.get(), addr, bytes, access));
  if (mr_.get() != nullptr) return;
  const int err = errno != 0 ? errno : EIO;
  std::string hint;
  if (err == ENOMEM) {
    hint = memlock_hint();
  } else if (err == EINVAL && (access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) != 0 &&
             (access & IBV_ACCESS_LOCAL_WRITE) == 0) {
    hint = "REMOTE_WRITE and REMOTE_ATOMIC require LOCAL_WRITE too";
  } else {
    hint = fmt::format("{} at {} on {}, access {}", format_bytes(bytes), addr, pd.device_name(), access_names(access));
  }
  throw VerbsError("ibv_reg_mr", err, std::move(hint));
}

MemoryRegion::MemoryRegion(const ProtectionDomain& pd, const HostBuffer& buffer, int access)
    : MemoryRegion(pd, buffer.data(), buffer.size(), access) {}

void MemoryRegion::describe(Endpoint& endpoint) const noexcept {
  endpoint.addr = addr();
  endpoint.rkey = rkey();
  endpoint.length = length();
}

template <>
void HandleTraits<ibv_mr>::destroy(ibv_mr* mr) noexcept {
  if (const int rc = ibv_dereg_mr(mr); rc != 0) log_destroy_failure("ibv_dereg_mr", rc);
}

}  // namespace fabench::verbs
