#include "fabench/collbench/roles.hpp"

namespace fabench::collbench {

int follow(Session& session) {
  return world::follow(session.boot(), session,
                       world::DriverOptions{"fabench-coll", session.options().timeout,
                                            session.options().spin_before_yield});
}

}  // namespace fabench::collbench
