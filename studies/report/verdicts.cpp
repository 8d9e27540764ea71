#include "studies/report/verdicts.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace nl {

std::string run_status(bool diverged, double val_loss) {
  if (diverged || !std::isfinite(val_loss)) return "DIVERGED (NaN/inf)";
  return val_loss > kStuckLoss ? "stuck near unigram loss" : "ok";
}

double percent_above(double a, double b) { return 100.0 * (a - b) / b; }

int agreeing_decimals(double a, double b, int max_decimals) {
  char x[64], y[64];
  int agree = -1;
  for (int d = 0; d <= max_decimals; ++d) {
    std::snprintf(x, sizeof x, "%.*f", d, a);
    std::snprintf(y, sizeof y, "%.*f", d, b);
    if (std::string(x) != y) break;
    agree = d;
  }
  return agree;
}

std::string held(bool claim_holds) { return claim_holds ? "**held**" : "**did not hold**"; }

Spread spread_of(const std::vector<double>& v) {
  Spread s{NAN, NAN, NAN, v.size()};
  if (v.empty()) return s;
  double sum = 0;
  s.min = s.max = v[0];
  for (double x : v) {
    sum += x;
    s.min = std::min(s.min, x);
    s.max = std::max(s.max, x);
  }
  s.mean = sum / (double)v.size();
  return s;
}

}  // namespace nl
