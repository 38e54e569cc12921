// fabench-bw: point-to-point bandwidth and message rate (write, read, send).
// Thin by design: flags, registration and running live in lib/pair.
#include "fabench/pair/app.hpp"

int main(int argc, char** argv) { return fabench::pair::pair_main(argc, argv, fabench::pair::Kind::kBandwidth); }
