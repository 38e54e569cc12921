// fabench-accept: fabric acceptance, every pair of N nodes judged, culprit named.
#include "fabench/acceptbench/app.hpp"

int main(int argc, char** argv) { return fabench::acceptbench::accept_main(argc, argv); }
