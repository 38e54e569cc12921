// fabench-lat: point-to-point latency (write/send ping-pong, read, atomics).
// Thin by design: flags, registration and running live in lib/harness.
#include "fabench/harness/app.hpp"

int main(int argc, char** argv) { return fabench::harness::bench_main(argc, argv, fabench::harness::Kind::kLatency); }
