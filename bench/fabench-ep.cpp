// fabench-ep: MoE dispatch and combine (expert parallelism) over RDMA, shaped by real models.
#include "fabench/epbench/app.hpp"

int main(int argc, char** argv) { return fabench::epbench::ep_main(argc, argv); }
