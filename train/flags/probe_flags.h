// The settings of the probes a training command can run beside its training, and their
// flags: per-layer activation statistics (--act-stats-*), the regime study's measurements
// (--measure-*) and DyT's screening step (--screen-*). The probes themselves are
// studies/instruments/ (act_stats_observer.h, measurement_observer.h, screening.h); the
// command line that declares these flags is train/flags/train_commands.h.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "train/flags/flag_parser.h"

namespace nl {

struct ActStatsSettings {
  int64_t every = 100;  // steps between statistics (0: none)
  int64_t batch = 16;   // sequences of the fixed held-out batch (drawn with seed + 5), or images
};
// --act-stats-every, --act-stats-batch
void add_act_stats_flags(FlagParser& p, ActStatsSettings& s);

struct MeasureAtSettings {
  std::vector<int64_t> steps;  // empty: measure nothing
  int64_t batches = 4;         // held-out batches of 32 sequences
};
// --measure-at, --measure-batches
void add_measure_flags(FlagParser& p, MeasureAtSettings& s);

constexpr int64_t kScreenSteps = 500;  // Verma 2026's screening step
// Where and on how much the screen measures: --screen-steps, --screen-batches.
struct ScreenSettings {
  int64_t steps = kScreenSteps;
  int64_t batches = 4;
};
void add_screen_flags(FlagParser& p, ScreenSettings& s);
// Throws naming --norm unless its kind declares the screen (NormKind::screened).
void check_screened(const std::string& norm);

}  // namespace nl
