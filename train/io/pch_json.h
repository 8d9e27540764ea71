// nlohmann-json and the standard headers beside it, precompiled by the Makefile for the
// library's objects that parse JSON (scripts/json-users.sh) and loaded with -include in
// place of parsing them: about 0.7 s of CPU less for each (docs/performance.md, "Build
// time"). Only headers from outside the project belong here; a source still includes
// what it uses itself. (No #pragma once: it is compiled as a file of its own.)
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>
