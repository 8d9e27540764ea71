// Catch2's main, compiled once into its own object (it is slow to compile).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
