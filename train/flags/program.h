// The frame of every program's main (apps/): the body runs; an nl::Error, or any other
// exception (an allocation that failed included), becomes one line
//   PROGRAM: error: MESSAGE
// on stderr and exit code 2. An allocation that failed (std::bad_alloc, or the caching
// allocator's nl::Error) also names the part of the run's memory estimate that holds the
// most (train/safety/limits.h), which is the setting to make smaller. In an MPI job the line names the rank and the
// whole job ends (the other ranks may be waiting for this one in a collective).
#pragma once
#include <functional>
#include <string>

namespace nl {

int run_program(const std::string& program, const std::function<int()>& body);

}  // namespace nl
