// How many threads the next training step gets, when another process wants the cores.
//
// On two cores with one competing CPU-bound process, a 2-thread step shares the cores
// three ways: each of our threads gets about 2/3 of a core, and the one descheduled
// holds up the other at every barrier of the step's hundreds of parallel loops. Measured
// on the project's machine (docs/performance.md, `bench_gpt --contend`): beside a nice-0
// process the 2-thread tiny step took 1.15x the 1-thread step, beside a nice-19 one
// 1.01x; alone it takes 0.61x. So the loop watches its own threads' run-queue wait (the
// kernel's schedstat: time a thread was runnable while another process held its core)
// and, when it is high, tries fewer threads for a few steps and keeps whichever count
// stepped faster. It looks again after a while, as a competitor comes and goes. The
// kernels split their sums in chunks fixed by the shapes, not by the thread count, so
// a run writes the same numbers at 1 and at 2 threads (tests/train/test_thread_governor.cpp
// checks a whole train_gpt log): the policy moves time, not results. Off with
// --threads-adapt off.
#pragma once
#include <string>
#include <vector>

namespace nl {

// Seconds this process's threads have spent runnable but waiting for a core, summed
// over its threads (/proc/self/task/*/schedstat, second field; 0 where the kernel has
// no schedstat). Only another process on the cores makes a thread wait there.
double run_queue_wait_seconds();

class ThreadGovernor {
 public:
  struct Options {
    int window = 8;               // steps measured per setting before a decision
    int hold = 200;               // steps a decision stands before the next look
    double queued_share = 0.15;   // run-queue wait over (wall x threads) that starts a probe
  };
  // `max_threads`: the count the run asked for (--threads); it starts there.
  ThreadGovernor(int max_threads, Options options);
  explicit ThreadGovernor(int max_threads) : ThreadGovernor(max_threads, Options()) {}

  // The step just done took `seconds` of wall time, and its threads waited
  // `queued_seconds` in the run queue (summed over threads). Returns the thread count
  // for the next step; when it differs from this step's, change() says why.
  int after_step(double seconds, double queued_seconds);
  int threads() const { return threads_; }

  // The same around a real step: start_step() before it reads the run-queue wait;
  // end_step(seconds) after it reads it again, decides, and sets the thread count of
  // both pools (tensor/threads.h) when it changes; it returns true when the step led to
  // a decision (change() says which), so that the loop prints each one once.
  void start_step();
  bool end_step(double seconds);
  // A sentence on the policy's last decision ("" before the first): a probe started,
  // a count kept, the full count restored.
  const std::string& change() const { return change_; }

 private:
  enum class Phase { Watch, Probe, Hold };
  void decide_after_probe();
  void announce(const std::string& sentence);

  int max_threads_, threads_;
  Options o_;
  Phase phase_ = Phase::Watch;
  std::vector<double> seconds_, shares_;  // this window's steps
  double full_median_ = 0, full_share_ = 0;
  int held_ = 0;
  std::string change_;
  bool news_ = false;  // a decision since end_step last returned
  double queued_at_start_ = 0;
};

}  // namespace nl
