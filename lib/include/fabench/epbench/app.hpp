// fabench-ep's main(): MoE dispatch and combine over RDMA (bench/fabench-ep.cpp calls it).
#pragma once

namespace fabench::epbench {

int ep_main(int argc, char** argv);

}  // namespace fabench::epbench
