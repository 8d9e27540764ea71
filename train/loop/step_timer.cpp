#include "train/loop/step_timer.h"

#include <time.h>

#include "train/loop/median.h"

namespace nl {

namespace {

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double median_after_first(std::vector<double> times) {
  if (times.size() > 1) times.erase(times.begin());
  return median(times);
}

}  // namespace

double wall_seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

const std::string StepTimer::kNone;

StepTimer::StepTimer(int governed_threads) : loop_start_(Clock::now()), loop_cpu_start_(process_cpu_seconds()) {
  if (governed_threads > 0) governor_.emplace(governed_threads);
}

void StepTimer::begin() {
  step_start_ = Clock::now();
  step_cpu_start_ = process_cpu_seconds();
  if (governor_) governor_->start_step();
}

double StepTimer::end() {
  const double dt = wall_seconds_since(step_start_);
  wall_.push_back(dt);
  cpu_.push_back(process_cpu_seconds() - step_cpu_start_);
  decided_ = governor_ && governor_->end_step(dt);
  return dt;
}

double StepTimer::items_per_s(double items_per_step) const { return items_per_step / median_after_first(wall_); }
double StepTimer::items_per_cpu_s(double items_per_step) const { return items_per_step / median_after_first(cpu_); }
double StepTimer::loop_s() const { return stopped_s_ >= 0 ? stopped_s_ : wall_seconds_since(loop_start_); }
double StepTimer::loop_cpu_s() const {
  return stopped_cpu_s_ >= 0 ? stopped_cpu_s_ : process_cpu_seconds() - loop_cpu_start_;
}

void StepTimer::stop() {
  stopped_s_ = loop_s();
  stopped_cpu_s_ = loop_cpu_s();
}

}  // namespace nl
