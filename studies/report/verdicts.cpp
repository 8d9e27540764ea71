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

double unigram_loss(const std::vector<uint8_t>& text) {
  if (text.empty()) return NAN;
  std::vector<double> counts(256, 0.0);
  for (uint8_t b : text) counts[b] += 1;
  double h = 0;
  for (double c : counts)
    if (c > 0) h -= c / (double)text.size() * std::log(c / (double)text.size());
  return h;
}

std::string status_against_ln(bool diverged, double val_loss, double ln_val, double unigram) {
  if (diverged || !std::isfinite(val_loss)) return "DIVERGED (NaN/inf)";
  if (!std::isfinite(ln_val)) return run_status(false, val_loss);
  if (unigram - val_loss < 0.1 * (unigram - ln_val)) return "stuck near unigram loss";
  const double behind = percent_above(val_loss, ln_val);
  if (behind > 1.0) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "behind ln by %.1f %%", behind);
    return buf;
  }
  return "ok";
}

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
