// Numerical faults: a loss or gradient that is NaN or infinite. Checked after every
// backward pass, before clipping and the optimizer step touch the parameters, so the
// parameters (and the last checkpoint) are still those of the last good step.
#pragma once
#include <cstdint>
#include <string>

#include "nn/module.h"

namespace nl {

// "" when loss and every gradient are finite. Otherwise one line naming the step, the
// loss when it is not finite, and the first parameter (in the model's order, which
// follows the layers) whose gradient holds a NaN or infinity, with how many of its
// values do.
// A finite loss beyond kMaxLoss counts as such a fault too: a mean cross-entropy of
// 1e4 nats (a uniform guess over 256 bytes is 5.5) comes only from weights that have
// run away, and training on it wrote a "done" run with a loss of 2.6e36.
constexpr float kMaxLoss = 1e4f;
std::string describe_nonfinite(int64_t step, float loss, const FlatParameters& flat);
// The same, given the gradients' sum of squares (sum_squares(flat.grads), tensor/optim.h),
// which a training step takes anyway for its gradient norm: it is finite exactly when every
// gradient is (squares summed in double cannot overflow from finite floats), so a good
// step needs no pass of its own over the gradients.
std::string describe_nonfinite(int64_t step, float loss, const FlatParameters& flat, double grad_sum_squares);

// What a run does on such a step: stop (keeping the last good checkpoint), or skip
// the step (no parameter update) and go on; after kMaxSkippedInARow skipped steps in
// a row it stops anyway, since the model is not coming back.
enum class NonFiniteAction { Stop, Skip };
constexpr int64_t kMaxSkippedInARow = 10;
NonFiniteAction parse_nonfinite_action(const std::string& text);  // "stop" | "skip"
const char* to_string(NonFiniteAction action);

}  // namespace nl
