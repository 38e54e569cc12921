// Catch2 v2 main for the rxe tests (run inside tools/softroce-vm).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
