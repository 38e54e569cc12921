// fabench-coll: all-reduce, all-gather, reduce-scatter and all-to-all across N ranks.
#include "fabench/collbench/app.hpp"

int main(int argc, char** argv) { return fabench::collbench::coll_main(argc, argv); }
