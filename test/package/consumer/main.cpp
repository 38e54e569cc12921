// A user's program on the installed fabench::verbs: lists the RDMA devices (none is fine: the
// test runs where there is no RDMA hardware) and names the fabench it was built against.
#include <iostream>

#include <fabench/base/build_info.hpp>
#include <fabench/verbs/device.hpp>
#include <fabench/verbs/error.hpp>

int main() {
  try {
    const fabench::verbs::DeviceList list;
    std::cout << list.size() << " RDMA device(s)";
    for (const auto& name : list.names()) std::cout << ' ' << name;
    std::cout << '\n';
  } catch (const fabench::verbs::VerbsError& e) {  // libibverbs without kernel support: still ours
    std::cout << "no device list: " << e.what() << '\n';
  }
  std::cout << "fabench " << fabench::build_version() << '\n';
  return 0;
}
