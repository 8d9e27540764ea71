#include "train/safety/run_safety.h"

#include <cmath>
#include <cstdio>

#include "tensor/optim.h"
#include "train/safety/stop_signals.h"

namespace nl {

int report_run_end(const char* program, const RunEnd& end) {
  const std::string kept = end.checkpoint_step >= 0 ? "checkpoint of step " + std::to_string(end.checkpoint_step) +
                                                          " in " + end.checkpoint_path
                                                    : std::string("no checkpoint was written by this run");
  if (end.signal) {
    std::fprintf(stderr, "%s: stopped by %s: %s (continue with --resume)\n", program, signal_name(end.signal),
                 kept.c_str());
    return 128 + end.signal;
  }
  if (!end.fault.empty()) {
    std::fprintf(stderr, "%s: stopped: %s; %s\n", program, end.fault.c_str(),
                 end.checkpoint_step >= 0 ? ("kept the last good " + kept).c_str() : kept.c_str());
    return 1;
  }
  return 0;
}

NonFiniteGuard::Verdict NonFiniteGuard::check(int64_t step, float loss, const FlatParameters& flat,
                                              double grad_sum_squares) {
  message_ = describe_nonfinite(step, loss, flat, grad_sum_squares);
  if (message_.empty()) {
    skipped_in_a_row_ = 0;
    return Verdict::Ok;
  }
  if (action_ == NonFiniteAction::Stop) return Verdict::Stop;
  if (++skipped_in_a_row_ > kMaxSkippedInARow) {
    message_ += " (" + std::to_string(kMaxSkippedInARow) + " steps in a row were skipped before it)";
    return Verdict::Stop;
  }
  if (warnings_) std::fprintf(warnings_, "warning: %s: step skipped (--on-nonfinite skip)\n", message_.c_str());
  return Verdict::Skip;
}

std::optional<float> guarded_step(NonFiniteGuard& guard, int64_t step, float loss, FlatParameters& flat,
                                  AdamW& optim, float lr, float clip, RunEnd& end) {
  // one pass over the gradients for the check and the clipping norm both
  const double grad_sum_squares = sum_squares(flat.grads);
  switch (guard.check(step, loss, flat, grad_sum_squares)) {
    case NonFiniteGuard::Verdict::Stop:
      end.fault = guard.message();
      return std::nullopt;
    case NonFiniteGuard::Verdict::Skip:
      ++end.skipped_steps;
      return NAN;
    default: {
      const float grad_norm = clip_grad_norm(flat, clip, grad_sum_squares);
      optim.step(lr);
      return grad_norm;
    }
  }
}

}  // namespace nl
