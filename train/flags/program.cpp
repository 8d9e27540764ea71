#include "train/flags/program.h"

#include <cstdio>
#include <exception>
#include <new>

#include "train/safety/distributed.h"

namespace nl {

int run_program(const std::string& program, const std::function<int()>& body) {
  std::string message;
  try {
    return body();
  } catch (const std::bad_alloc&) {
    message = "out of memory (an allocation failed; a smaller --batch or model needs less)";
  } catch (const std::exception& e) {  // nl::Error included
    message = e.what();
  }
  if (dist::world_size() > 1)
    std::fprintf(stderr, "%s: error (rank %d of %d): %s\n", program.c_str(), dist::rank(), dist::world_size(),
                 message.c_str());
  else
    std::fprintf(stderr, "%s: error: %s\n", program.c_str(), message.c_str());
  return dist::abort_job(2);
}

}  // namespace nl
