#include "train/flags/option_warnings.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "nn/norms/registry.h"
#include "train/flags/recipes.h"
#include "train/loop/train_config.h"

namespace nl {

namespace {

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

bool declares(const NormKind& kind, const std::string& option) {
  return std::any_of(kind.options.begin(), kind.options.end(), [&](const NormOption& o) { return o.name == option; });
}

}  // namespace

std::vector<std::string> gpt_option_warnings(const GPTRunConfig& c) {
  std::vector<std::string> out;
  const NormKind& blocks = norm_kind(c.model.norm.name);
  const NormKind& final_kind = norm_kind(c.model.final_norm_name());
  for (const auto& [name, value] : c.model.norm.options) {
    if (declares(blocks, name) || declares(final_kind, name)) continue;
    const double initial = norm_option(name).initial;
    if (!std::isnan(initial) && value == initial) continue;  // its default, as every study passes it
    // a recipe sets it for the norm of its paper; run with another norm, it is said to be the recipe's
    const std::vector<std::string> recipe_flags =
        c.recipe.empty() ? std::vector<std::string>{} : recipe(c.recipe).flags;
    const bool from_recipe = std::count(recipe_flags.begin(), recipe_flags.end(), "--" + name) > 0;
    out.push_back("--" + name + " " + number_text(value) + (from_recipe ? " (from --recipe " + c.recipe + ")" : "") +
                  " does nothing: no norm of this model (--norm " + blocks.name + ", final norm " + final_kind.name +
                  ") has that option");
  }
  if (c.schedule == "flat" && c.min_lr != TrainConfig().min_lr)
    out.push_back("--min-lr " + number_text(c.min_lr) + " does nothing under --schedule flat (the lr stays at --lr " +
                  number_text(c.lr) + ")");
  if (c.warmup > c.run_steps())
    out.push_back("--warmup " + std::to_string(c.warmup) + " is longer than the run (" +
                  std::to_string(c.run_steps()) + " steps): the lr rises for the whole run and never reaches --lr " +
                  number_text(c.lr));
  return out;
}

std::string gpt_run_summary(const GPTRunConfig& c, int64_t parameters) {
  char params[32];
  std::snprintf(params, sizeof params, "%.2fM", (double)parameters / 1e6);
  return std::string(params) + " parameters, norm " + c.model.norm.name + " (final " + c.model.final_norm_name() +
         ") on the " + c.model.block + " block, recipe " + (c.recipe.empty() ? "plain" : c.recipe) + ", " +
         std::to_string(c.run_steps()) + " steps of " + std::to_string(c.batch) + " x " +
         std::to_string(c.model.context) + " bytes, out " + c.out_dir + ", " + std::to_string(c.threads) +
         " thread(s)";
}

}  // namespace nl
