#include "tensor/decimal.h"

#include <cstdio>
#include <cstdlib>

namespace nl {

std::string shortest_decimal(float v) {
  char buf[32];
  for (int digits = 1; digits <= 9; ++digits) {  // 9 significant digits always read back
    std::snprintf(buf, sizeof buf, "%.*g", digits, (double)v);
    if (std::strtof(buf, nullptr) == v) break;
  }
  return buf;
}

std::string shortest_decimal(double v) {
  char buf[32];
  for (int digits = 1; digits <= 17; ++digits) {  // 17 significant digits always read back
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

}  // namespace nl
