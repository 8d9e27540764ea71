// The reliability options and end states that the GPT and ViT training loops share:
// periodic checkpoints kept K deep (train/io/checkpoint_keeper.h), what to do on a
// non-finite loss or gradient (train/safety/nonfinite.h), and how a run that did not finish
// its schedule reports why (a stop signal, a numerical fault). The programs turn a
// run's end into a line and an exit code with report_run_end; the flags that set
// RunSafety are in train/flags/families.h.
#pragma once
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "nn/module.h"
#include "train/io/checkpoint_keeper.h"
#include "train/safety/nonfinite.h"
#include "train/optim/optim.h"

namespace nl {

struct RunSafety {
  CheckpointPolicy checkpoints;
  NonFiniteAction on_nonfinite = NonFiniteAction::Stop;
  void validate() const { checkpoints.validate(); }
};

// How a run ended when it did not complete its steps (both empty: it did, or it
// reached --stop-after).
struct RunEnd {
  int signal = 0;          // SIGINT / SIGTERM: stopped after a step, checkpoint written
  std::string fault;       // a numerical fault stopped it; the last checkpoint was kept
  int64_t skipped_steps = 0;     // steps dropped for a NaN/inf under --on-nonfinite skip
  int64_t checkpoint_step = -1;  // the step of the checkpoint on disk from this run (-1: none)
  std::string checkpoint_path;
};

// Prints the line that explains an unfinished run on stderr and returns the exit code:
// 128 + signal for a stop signal, 1 for a numerical fault, 0 otherwise (nothing printed).
int report_run_end(const char* program, const RunEnd& end);

// Checks each step's loss and gradients, and counts skipped steps in a row.
class NonFiniteGuard {
 public:
  enum class Verdict { Ok, Skip, Stop };
  // Skip warnings go to `warnings` (none when null).
  explicit NonFiniteGuard(NonFiniteAction action, std::FILE* warnings = stderr)
      : action_(action), warnings_(warnings) {}
  // step: the 1-based number of the step being taken. Skip prints a warning line;
  // Stop leaves the reason in message().
  Verdict check(int64_t step, float loss, const FlatParameters& flat, double grad_sum_squares);
  const std::string& message() const { return message_; }

 private:
  NonFiniteAction action_;
  std::FILE* warnings_;
  int64_t skipped_in_a_row_ = 0;
  std::string message_;
};

// One optimizer step behind the check: on a finite step, clips the gradients and takes
// the AdamW step and returns the gradient norm; a skipped step touches nothing, counts
// in end.skipped_steps and returns NaN; a stop puts the reason in end.fault and returns
// nothing.
std::optional<float> guarded_step(NonFiniteGuard& guard, int64_t step, float loss, FlatParameters& flat,
                                  AdamW& optim, float lr, float clip, RunEnd& end);

}  // namespace nl
