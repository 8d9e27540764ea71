// Catch2's main, compiled once into its own object (it is slow to compile). The tests
// run with the settings every program gets (tensor/threads.h: the bounded spin, and
// OpenBLAS's AVX kernels where it did not recognise the CPU).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "tensor/threads.h"

int main(int argc, char** argv) {
  nl::configure_runtime(argv);
  return Catch::Session().run(argc, argv);
}
