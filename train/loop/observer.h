// A measurement attached to a training run from outside (the activation statistics,
// a study's probe at some step): the loop calls it on the lead rank at fixed points.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

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

// Makes an observer for a run once its task (model and data) exists; studies attach
// their measurements this way (the activation statistics, the DyT screen).
template <class Task>
using ObserverFactory = std::function<std::unique_ptr<TrainObserver>(Task& task)>;

// The observers of `factories` for `task`, kept alive by `owned`, as train() takes them.
template <class Task>
std::vector<TrainObserver*> make_observers(Task& task, const std::vector<ObserverFactory<Task>>& factories,
                                           std::vector<std::unique_ptr<TrainObserver>>& owned) {
  std::vector<TrainObserver*> attached;
  for (const auto& make : factories) {
    owned.push_back(make(task));
    attached.push_back(owned.back().get());
  }
  return attached;
}

}  // namespace nl
