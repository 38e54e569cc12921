// Catch2 v2 main for the unit tests (no RDMA device needed).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
