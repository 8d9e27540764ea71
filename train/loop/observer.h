// A measurement attached to a training run from outside (the activation statistics,
// a study's probe at some step): the loop calls it on the lead rank at fixed points.
#pragma once
#include <cstdint>

namespace nl {

class TrainObserver {
 public:
  virtual ~TrainObserver() = default;
  // Once the run may write files, before its first step: the step it starts from (0
  // unless resumed) and the schedule's length.
  virtual void start(int64_t start_step, int64_t steps, bool resumed) {}
  // After each step and its evaluation: steps done so far.
  virtual void after_step(int64_t steps_done) {}
  // Before the checkpoint of `step` is written: what the observer wrote reaches the
  // disk, so that a run resumed from that checkpoint finds it.
  virtual void sync() {}
};

}  // namespace nl
