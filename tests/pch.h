// The headers nearly every test includes, Catch2's and nlohmann-json's above all, compiled
// once per build into a precompiled header that each test group loads instead of parsing
// them (the Makefile passes it with -include; docs/performance.md, "Build time"). Only library
// headers from outside the project belong here: a test includes the project's own
// headers itself, and the build tracks those. (No #pragma once: it is compiled as a
// file of its own, and -include reads it once.)
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>
