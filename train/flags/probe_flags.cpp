// The probes' flags (train/flags/probe_flags.h).
#include "train/flags/probe_flags.h"

#include "nn/norms/registry.h"
#include "tensor/error.h"
#include "train/safety/limits.h"

namespace nl {

void add_act_stats_flags(FlagParser& p, ActStatsSettings& s) {
  p.integer("--act-stats-every", s.every, 0, kMaxSteps,
            "per-layer activation statistics every N steps into DIR/act_stats.csv (0: off)", FlagRole::Setting);
  p.integer("--act-stats-batch", s.batch, 1, kMaxBatch,
            "sequences (train_gpt) or images (train_vit) of the fixed held-out batch the activation statistics are "
            "taken on", FlagRole::Setting);
}

void add_measure_flags(FlagParser& p, MeasureAtSettings& s) {
  std::string steps;
  for (int64_t v : s.steps) steps += (steps.empty() ? "" : ",") + std::to_string(v);
  p.custom(
      "--measure-at", steps,
      [&s](const std::string& v) {
        s.steps.clear();
        for (const std::string& item : split_list(v))
          s.steps.push_back(flag_integer("--measure-at", item, 1, kMaxSteps));
      },
      "take the regime study's instruments (saturation, centred effective rank, noise stability, logit variance, "
      "power-law alpha) at these steps (N,M,...; empty: never) into DIR/measurements.json",
      FlagRole::Setting);
  p.integer("--measure-batches", s.batches, 1, 64, "held-out batches of 32 sequences the measurements are taken on",
            FlagRole::Setting);
}

void add_screen_flags(FlagParser& p, ScreenSettings& s) {
  p.integer("--screen-steps", s.steps, 1, kMaxSteps, "the step at which the saturation is measured", FlagRole::Control);
  p.integer("--screen-batches", s.batches, 1, 1000, "held-out batches of 32 sequences the saturation is measured on",
            FlagRole::Control);
}

void check_screened(const std::string& norm) {
  std::string declared;
  for (const NormKind& k : norm_kinds())
    if (k.screened) declared += (declared.empty() ? "" : ", ") + k.name;
  NL_CHECK(norm_kind(norm).screened, "--norm ", norm,
           ": the screening rule applies only to the norms that declare it (", declared, ")");
}

}  // namespace nl
