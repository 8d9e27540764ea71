// The clocks of a run's steps: each step's wall time (its speed in the log) and the
// medians result.json reports, over wall time and over this process's CPU time; and the
// thread policy that step times drive (train/loop/thread_governor.h: fewer threads while
// another process holds a core; results do not depend on it).
#pragma once
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "train/loop/thread_governor.h"

namespace nl {

class StepTimer {
 public:
  // governed_threads > 0: the thread governor adapts the thread count up to it; 0: off.
  explicit StepTimer(int governed_threads = 0);
  void begin();   // a step starts
  double end();   // it ended: its wall seconds
  // What the thread policy changed after the step that just ended ("" when nothing):
  // each decision is reported once.
  const std::string& thread_change() const { return decided_ ? governor_->change() : kNone; }
  // Examples per second: the median over the steps after the first, whose allocations
  // warm the caches; NaN with no step timed.
  double items_per_s(double items_per_step) const;
  // The same per second of CPU time used by all of this process's threads: unlike wall
  // time it does not grow when other programs share the cores (a one-thread run's
  // examples per CPU second are its speed on one core of its own).
  double items_per_cpu_s(double items_per_step) const;
  bool timed_any() const { return !wall_.empty(); }
  void stop();  // the loop ended: loop_s() and loop_cpu_s() stay as they are now
  // Since construction (or until stop()), evaluations and checkpoints included.
  double loop_s() const;
  double loop_cpu_s() const;

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point loop_start_, step_start_;
  double loop_cpu_start_ = 0, step_cpu_start_ = 0;
  std::vector<double> wall_, cpu_;
  double stopped_s_ = -1, stopped_cpu_s_ = -1;  // -1: running
  std::optional<ThreadGovernor> governor_;
  bool decided_ = false;
  static const std::string kNone;
};

// Seconds since t on the steady clock (wall time).
double wall_seconds_since(std::chrono::steady_clock::time_point t);

}  // namespace nl
