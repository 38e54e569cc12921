// fabench-accept: every pair of N nodes measured and judged against the link rate and the fleet.
#pragma once

namespace fabench::acceptbench {

int accept_main(int argc, char** argv);

}  // namespace fabench::acceptbench
