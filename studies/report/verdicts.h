// The small, tested functions every study's verdict sentences come from, so that a
// report can only claim what its own numbers show (tests/studies/test_verdicts.cpp).
#pragma once
#include <cstdint>
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

// The unigram (byte-frequency) loss of a text in nats per byte: the entropy of its
// bytes' distribution, what a model that learnt only byte frequencies reaches.
double unigram_loss(const std::vector<uint8_t>& text);

// A run's status against LayerNorm on the same block: "DIVERGED (NaN/inf)"; "stuck near
// unigram loss" when it closed less than a tenth of the gap from the unigram loss down
// to LayerNorm's; "behind ln by N %" when its validation loss is more than 1 % above
// LayerNorm's; else "ok". Without a LayerNorm run (ln_val NaN), run_status's.
std::string status_against_ln(bool diverged, double val_loss, double ln_val, double unigram);

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
