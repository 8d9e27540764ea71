#include "train/loop/thread_governor.h"

#include <dirent.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <utility>

#include "tensor/error.h"
#include "tensor/threads.h"
#include "train/loop/median.h"

namespace nl {

double run_queue_wait_seconds() {
  DIR* dir = opendir("/proc/self/task");
  if (!dir) return 0;
  double total_ns = 0;
  while (const dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream f(std::string("/proc/self/task/") + e->d_name + "/schedstat");
    double run_ns = 0, wait_ns = 0;
    if (f >> run_ns >> wait_ns) total_ns += wait_ns;
  }
  closedir(dir);
  return total_ns * 1e-9;
}

namespace {

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / (double)v.size();
}

}  // namespace

ThreadGovernor::ThreadGovernor(int max_threads, Options options)
    : max_threads_(max_threads), threads_(max_threads), o_(options) {
  NL_CHECK(max_threads >= 1, "ThreadGovernor: max_threads must be >= 1, got ", max_threads);
  NL_CHECK(o_.window >= 1 && o_.hold >= 0 && o_.queued_share >= 0, "ThreadGovernor: window ", o_.window, ", hold ",
           o_.hold, " and queued share ", o_.queued_share, " must be >= 1, >= 0, >= 0");
}

int ThreadGovernor::after_step(double seconds, double queued_seconds) {
  if (max_threads_ == 1) return threads_;
  if (phase_ == Phase::Hold) {
    if (++held_ < o_.hold) return threads_;
    // look again at the full count: the competitor may have gone
    if (threads_ != max_threads_)
      announce("threads " + std::to_string(threads_) + " -> " + std::to_string(max_threads_) + ": " +
               std::to_string(o_.hold) + " steps on, measuring the full count again");
    threads_ = max_threads_;
    phase_ = Phase::Watch;
    seconds_.clear();
    shares_.clear();
    return threads_;
  }
  seconds_.push_back(seconds);
  shares_.push_back(seconds > 0 ? queued_seconds / (seconds * threads_) : 0.0);
  if ((int)seconds_.size() < o_.window) return threads_;
  if (phase_ == Phase::Probe) {
    decide_after_probe();
  } else if (mean_of(shares_) > o_.queued_share) {
    // contended: try half the threads for a window
    full_median_ = median(seconds_);
    full_share_ = mean_of(shares_);
    threads_ = std::max(1, max_threads_ / 2);
    phase_ = Phase::Probe;
    char why[160];
    std::snprintf(why, sizeof why, "queued %.0f %% of the time over %d steps; trying %d for as many", 100 * full_share_,
                  o_.window, threads_);
    announce("threads " + std::to_string(max_threads_) + " -> " + std::to_string(threads_) + ": " + why);
  }
  seconds_.clear();
  shares_.clear();
  return threads_;
}

void ThreadGovernor::start_step() { queued_at_start_ = run_queue_wait_seconds(); }

bool ThreadGovernor::end_step(double seconds) {
  const int before = threads_;
  if (after_step(seconds, run_queue_wait_seconds() - queued_at_start_) != before) set_num_threads(threads_);
  return std::exchange(news_, false);
}

void ThreadGovernor::announce(const std::string& sentence) {
  change_ = sentence;
  news_ = true;
}

void ThreadGovernor::decide_after_probe() {
  const double probe_median = median(seconds_);
  char why[200];
  std::snprintf(why, sizeof why, "(queued %.0f %% of the time at %d; %.1f ms a step at %d, %.1f at %d)",
                100 * full_share_, max_threads_, 1e3 * probe_median, threads_, 1e3 * full_median_, max_threads_);
  const int probed = threads_;
  if (probe_median < full_median_) {
    announce("keeping " + std::to_string(probed) + " of " + std::to_string(max_threads_) +
             " threads for " + std::to_string(o_.hold) + " steps: another process holds a core " + why);
  } else {
    threads_ = max_threads_;
    announce("threads " + std::to_string(probed) + " -> " + std::to_string(max_threads_) +
             ": fewer threads were not faster " + why);
  }
  phase_ = Phase::Hold;
  held_ = 0;
}

}  // namespace nl
