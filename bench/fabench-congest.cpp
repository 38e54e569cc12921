// fabench-congest: victim latency and bandwidth alone and beside congestors (GPCNeT's method).
#include "fabench/congestbench/app.hpp"

int main(int argc, char** argv) { return fabench::congestbench::congest_main(argc, argv); }
