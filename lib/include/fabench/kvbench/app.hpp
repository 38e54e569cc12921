// main() of fabench-kv: KV-cache transfers shaped by real models
// (disaggregated prefill/decode), launched on prefill TP + decode TP ranks by
// mpirun, srun or fabench-launch; --plan sizes a transfer on paper, no RDMA.
#pragma once

namespace fabench::kvbench {

int kv_main(int argc, char** argv);

}  // namespace fabench::kvbench
