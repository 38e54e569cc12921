// What the control-plane unit tests share.
#pragma once

#include <catch2/catch.hpp>

#include "fabench/ctrl/error.hpp"

namespace fabench::test {

// The CtrlError `f` throws; fails the test when it throws none.
template <typename F>
ctrl::CtrlError catch_ctrl(F&& f) {
  try {
    f();
  } catch (const ctrl::CtrlError& e) {
    return e;
  }
  FAIL("no CtrlError thrown");
  return ctrl::CtrlError(ctrl::CtrlError::Kind::kProtocol, "unreachable");
}

}  // namespace fabench::test
