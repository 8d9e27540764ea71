#include "train/safety/limits.h"

#include <unistd.h>

#include <cmath>

#include "tensor/error.h"

namespace nl {

void check_memory_estimate(double bytes, const std::string& what) {
  const double physical = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
  const double gib = 1024.0 * 1024.0 * 1024.0;
  NL_CHECK(physical <= 0 || bytes <= physical, what, " needs about ", std::round(bytes / gib * 10) / 10,
           " GiB, more than this machine's ", std::round(physical / gib * 10) / 10, " GiB of memory");
}

}  // namespace nl
