// A way out of a long forward or backward pass: the training loop (train/loop/trainer.h)
// installs a poll (has a stop signal come?) around a training step, and the graph's
// reverse sweep and the models' block loops call poll_interrupt(), which throws
// Interrupted when it answers yes. The step is then abandoned before the optimizer
// touched a parameter, so the last whole step's state is what is saved. Without a
// poll installed (the default) poll_interrupt() does nothing.
#pragma once
#include <exception>

namespace nl {

struct Interrupted : std::exception {
  const char* what() const noexcept override { return "interrupted: a stop signal came during a training step"; }
};

// Installs `poll` (nullptr: none) for as long as the object lives; the previous one after.
class InterruptPoll {
 public:
  explicit InterruptPoll(bool (*poll)());
  ~InterruptPoll();
  InterruptPoll(const InterruptPoll&) = delete;
  InterruptPoll& operator=(const InterruptPoll&) = delete;

 private:
  bool (*previous_)();
};

// Throws Interrupted when a poll is installed and says so. Call it between pieces of
// work only, never inside a parallel region.
void poll_interrupt();

// Whether a poll is installed (a step that could be abandoned): the training loop's ranks
// vote on abandoning a step only then, so that all of them make the same collective calls.
bool interrupt_polling();

}  // namespace nl
