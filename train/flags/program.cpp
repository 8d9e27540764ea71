#include "train/flags/program.h"

#include <cstdio>
#include <exception>
#include <new>

#include "train/safety/distributed.h"
#include "train/safety/limits.h"

namespace nl {

namespace {

// The estimate the run passed (train/safety/limits.h), for a failed allocation: which
// setting holds the most, so the line says what to make smaller.
std::string with_estimate(std::string message) {
  const std::string note = memory_estimate_note();
  return note.empty() ? message : message + "; " + note;
}

}  // namespace

int run_program(const std::string& program, const std::function<int()>& body) {
  std::string message;
  try {
    return body();
  } catch (const std::bad_alloc&) {
    message = with_estimate("out of memory (an allocation failed)");
  } catch (const std::exception& e) {  // nl::Error included
    message = e.what();
    // the caching allocator's failure (tensor/allocator.h)
    if (message.rfind("allocator: out of ", 0) == 0) message = with_estimate(message);
  }
  if (dist::world_size() > 1)
    std::fprintf(stderr, "%s: error (rank %d of %d): %s\n", program.c_str(), dist::rank(), dist::world_size(),
                 message.c_str());
  else
    std::fprintf(stderr, "%s: error: %s\n", program.c_str(), message.c_str());
  return dist::abort_job(2);
}

}  // namespace nl
