// The depth study's speed section: median ms of a training step (train_step: forward,
// backward, clipping, AdamW) and of an inference forward (eval, no graph) per norm, on
// the `tiny` and `small` configurations of ../shared/BENCHMARKS.md, measured in one
// process round-robin over the norms so that a slower stretch of a shared machine hits
// them alike.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nl {

struct SpeedRow {
  std::string config, norm;
  double step_ms = 0, forward_ms = 0;
};

// reps timed rounds of `small` (4 x reps of `tiny`) after two warm-up rounds.
std::vector<SpeedRow> measure_norm_speed(const std::vector<std::string>& norms, int reps, uint64_t seed);

}  // namespace nl
