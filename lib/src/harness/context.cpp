#include "fabench/harness/context.hpp"

#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "fabench/base/error.hpp"
#include "fabench/verbs/cm.hpp"
#include "fabench/verbs/gid.hpp"

namespace fabench::harness {

namespace {
verbs::Device open_device(const ContextOptions& o) { return verbs::Device::open(o.device); }

std::uint8_t pick_port(const verbs::Device& dev, std::uint8_t wanted) {
  if (wanted != 0) {
    const auto& attr = dev.raw_attr();
    if (wanted > attr.phys_port_cnt) {
      throw UserError(fmt::format("-i {}: {} has {} port(s)", wanted, dev.name(), attr.phys_port_cnt));
    }
    return wanted;
  }
  auto p = dev.first_active_port();
  return p ? *p : 1;
}
}  // namespace

Context::Context(const ContextOptions& options)
    : device_(open_device(options)),
      pd_(device_),
      port_(device_.port(pick_port(device_, options.ib_port))),
      attributes_(device_.attributes(port_.port_num)) {
  if (!port_.is_active()) {
    throw RunError(fmt::format("{} port {} is {}, not ACTIVE", device_.name(), port_.port_num, port_.state_name));
  }
  if (port_.is_ethernet() || options.gid_index >= 0) {
    const auto table = device_.gid_table(port_.port_num);
    gid_index_ = verbs::choose_gid(table, port_.link_layer, options.gid_index, options.ipv6_gid).index;
  }
}

Context::~Context() = default;

Context::Context(const Context& like, verbs::Device device)
    : device_(std::move(device)),
      pd_(device_),
      port_(device_.port(like.port_.port_num)),
      attributes_(device_.attributes(port_.port_num)),
      gid_index_(like.gid_index_) {}

const Context& Context::rdma_cm() const {
  if (!rdma_cm_) {
    // Not make_unique: the constructor is private.
    rdma_cm_.reset(new Context(*this, verbs::Device::borrow(verbs::cm_device_context(device_.name()))));
  }
  return *rdma_cm_;
}

std::string Context::gid_type() const {
  if (gid_index_ < 0) return "none (LID routed)";
  const auto table = device_.gid_table(port_.port_num);
  const auto* e = table.find(gid_index_);
  return e != nullptr ? std::string(verbs::gid_type_name(e->type)) : "unknown";
}

std::string Context::gid_text() const {
  if (gid_index_ < 0) return "";
  const auto table = device_.gid_table(port_.port_num);
  const auto* e = table.find(gid_index_);
  return e != nullptr ? e->address() : "";
}

}  // namespace fabench::harness
