// The tuning grid of compare_norms --tune (studies/compare/tuned_comparison.h): its axes
// as the command line gives them, the settings they make, and the rule that picks a run's
// best setting. Pure functions, tested alone (tests/studies/test_tuning.cpp).
#pragma once
#include <string>
#include <vector>

namespace nl {

// One axis: a train_gpt flag without its dashes ("lr", "warmup", "dyt-alpha0-final") and
// the values it takes; `alpha0` stands for every DyT site's initial alpha at once
// (--dyt-alpha0 and the attention, MLP and final sites' own flags, which a recipe sets).
struct TuneAxis {
  std::string name;
  std::vector<std::string> values;
};

// "lr=3e-4,1e-3,3e-3;warmup=50,500": axes separated by ';', values by ','. Throws naming
// `flag` for an empty grid, an axis without values, one named twice, a name or value that
// is not letters, digits and .+- (a value names a folder), or an axis the study sets
// itself (out, threads, resume, train-bytes, ...).
std::vector<TuneAxis> parse_tune_axes(const std::string& text, const std::string& flag);

// The number of settings the axes make: the product of their sizes.
size_t tune_setting_count(const std::vector<TuneAxis>& axes);

// One point of the grid: `label` names its folder and its rows ("lr_3e-4+warmup_50"),
// `args` are the train_gpt flags it adds ({"--lr", "3e-4", "--warmup", "50"}).
struct TuneSetting {
  std::string label;
  std::vector<std::string> args;
};
// Every point, the first axis varying slowest.
std::vector<TuneSetting> tune_settings(const std::vector<TuneAxis>& axes);

// A tried setting as the selection sees it: whether its run finished (exit 0, finite
// losses), its loss on the tuning split, and the reported validation loss, which the rule
// must never read (it is here so that a test can show it does not).
struct TuneTrial {
  bool finished = false;
  double tuning_loss = 0;
  double reported_val_loss = 0;
};

// The index of the best trial: the finished one with the lowest finite tuning loss (the
// first of equal ones); -1 when none finished with a finite one.
int select_tuned(const std::vector<TuneTrial>& trials);

}  // namespace nl
