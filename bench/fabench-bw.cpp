// fabench-bw: point-to-point bandwidth and message rate (write, read, send).
// Thin by design: flags, registration and running live in lib/harness.
#include "fabench/harness/app.hpp"

int main(int argc, char** argv) { return fabench::harness::bench_main(argc, argv, fabench::harness::Kind::kBandwidth); }
