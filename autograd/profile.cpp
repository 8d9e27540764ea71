#include "autograd/profile.h"

#include <chrono>

namespace nl::profile {
namespace {

using Clock = std::chrono::steady_clock;

struct State {
  bool on = false;
  std::vector<std::pair<std::string, double>> totals;  // few phases: a linear search is fine
  // open scopes, innermost last, each with the moment it (re)started being charged
  std::vector<std::pair<const char*, Clock::time_point>> open;
};

State& state() {
  static thread_local State s;
  return s;
}

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace

void enable(bool on) { state().on = on; }
bool enabled() { return state().on; }
void reset() { state().totals.clear(); }

std::vector<std::pair<std::string, double>> totals() { return state().totals; }

void add(const std::string& phase, double seconds) {
  for (auto& [name, total] : state().totals)
    if (name == phase) {
      total += seconds;
      return;
    }
  state().totals.emplace_back(phase, seconds);
}

const char* current_phase() {
  const State& s = state();
  return s.on && !s.open.empty() ? s.open.back().first : nullptr;
}

// Entering a nested scope stops the charge to the enclosing one; leaving it restarts it.
Scope::Scope(const char* phase) : active_(state().on) {
  if (!active_) return;
  State& s = state();
  const Clock::time_point now = Clock::now();
  if (!s.open.empty()) add(s.open.back().first, seconds_between(s.open.back().second, now));
  s.open.emplace_back(phase, now);
}

Scope::~Scope() {
  if (!active_) return;
  State& s = state();
  const Clock::time_point now = Clock::now();
  add(s.open.back().first, seconds_between(s.open.back().second, now));
  s.open.pop_back();
  if (!s.open.empty()) s.open.back().second = now;
}

}  // namespace nl::profile
