// The decimal with the fewest digits that reads back as exactly a given float or
// double ("0.001" for 1e-3f, whose double is 0.0010000000474974513): how configs,
// help texts and reports write numbers that must survive a round trip.
#pragma once
#include <string>

namespace nl {

std::string shortest_decimal(float v);
std::string shortest_decimal(double v);

}  // namespace nl
