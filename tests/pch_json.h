// tests/pch.h's headers and nlohmann-json, precompiled for the test objects that parse
// JSON (scripts/json-users.sh lists them); the others load tests/pch.h alone, since a
// larger precompiled header costs every object that loads it (docs/performance.md,
// "Build time"). (No #pragma once: it is compiled as a file of its own.)
#include "tests/pch.h"

#include <nlohmann/json.hpp>
