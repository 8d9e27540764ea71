// Phase timing, for bench_gpt's breakdown of a training step into embedding, norms,
// attention, MLP, loss, the backward of each, and the optimizer. Off unless enabled;
// when off it costs one branch per recorded op. While on:
//   - the code inside a profile::Scope is charged to its phase, minus the time of the
//     scopes nested in it (so the phases add up to the time spent inside scopes);
//   - each op recorded inside a scope carries the phase, and backward() charges the
//     time of that op's backward to "<phase> backward"; the graph walk and the
//     accumulation into leaf gradients are phases of their own.
// Meant for one thread driving the model (the OpenMP workers inside kernels are part
// of whatever the driving thread is doing).
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace nl::profile {

void enable(bool on);
bool enabled();
void reset();                                                // clears the totals
std::vector<std::pair<std::string, double>> totals();        // (phase, seconds), in first-seen order
void add(const std::string& phase, double seconds);
const char* current_phase();                                 // innermost open scope, or nullptr

class Scope {
 public:
  explicit Scope(const char* phase);  // phase: a string literal (kept as a pointer)
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  bool active_;
};

}  // namespace nl::profile
