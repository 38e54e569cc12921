// fabench-kv: KV-cache transfers between prefill and decode ranks, shaped by real models.
#include "fabench/kvbench/app.hpp"

int main(int argc, char** argv) { return fabench::kvbench::kv_main(argc, argv); }
