// The small, tested functions every study's verdict sentences come from, so that a
// report can only claim what its own numbers show (tests/studies/test_verdicts.cpp).
#pragma once
#include <string>
#include <vector>

namespace nl {

// The loss of a byte-level model that only knows byte frequencies: this text's
// unigram entropy is about 3.3 nats per byte.
constexpr double kUnigramLoss = 3.3;
// A validation loss above this is "stuck near unigram loss".
constexpr double kStuckLoss = 3.2;

// "DIVERGED (NaN/inf)", "stuck near unigram loss" (val_loss above kStuckLoss), or "ok".
std::string run_status(bool diverged, double val_loss);

// 100 (a - b) / b: how much a is above b, in percent.
double percent_above(double a, double b);

// The most decimals d <= max_decimals with which a and b are written the same
// ("%.{d}f"); -1 when they differ even rounded to integers.
int agreeing_decimals(double a, double b, int max_decimals = 8);

// "**held**" or "**did not hold**".
std::string held(bool claim_holds);

// Mean, smallest and largest of a sample; NaN for an empty one.
struct Spread {
  double mean, min, max;
  size_t n;
};
Spread spread_of(const std::vector<double>& v);

}  // namespace nl
