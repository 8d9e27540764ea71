#include "studies/regime/regime_plan.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <map>

#include "train/flags/train_commands.h"
#include "studies/report/study.h"
#include "tensor/error.h"
#include "train/io/run_dir.h"
#include "train/io/text_fields.h"

namespace nl {

namespace {

using json = nlohmann::json;

// printf's formatting into a string of whatever length it takes (a --cells-from list can be long)
std::string format_text(const char* format, ...) {
  va_list args, again;
  va_start(args, format);
  va_copy(again, args);
  const int n = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  std::string text((size_t)std::max(n, 0) + 1, '\0');
  std::vsnprintf(&text[0], text.size(), format, again);
  va_end(again);
  text.resize((size_t)std::max(n, 0));
  return text;
}

// The finished cells of an earlier invocation (--cells-from: its results.json, or the
// copy beside its report) that this grid would train again: for each planned cell, the
// index of the earlier run of the same cell (model, arm label and flags, subset, width,
// seed) that ended without a fault, or -1. The earlier invocation must have had this
// one's recipe (every train_gpt flag the grid does not set, the ViT steps, the screen
// step): it throws naming the first difference, since its cells then measure something
// else. runs/ is not kept between machines or sessions; this file is, so a grid too long
// for one sitting grows a block at a time from the committed results.
std::vector<int> earlier_cells(const RegimeResults& earlier, const std::string& path,
                               const std::vector<RegimeCell>& plan_cells, const nlohmann::ordered_json& recipe,
                               const std::vector<std::string>& recipe_keys, int64_t vit_steps, int64_t screen_step) {
  const nlohmann::ordered_json there = nlohmann::ordered_json::parse(earlier.header.recipe.dump());
  // flags added after results files were committed: a file without one ran its default
  const std::string difference =
      first_recipe_difference(there, recipe, recipe_keys, later_flag_defaults(), "there", "here");
  NL_CHECK(difference.empty(), "--cells-from ", path, ": its runs have another recipe (", difference, ")");
  NL_CHECK(earlier.vit_steps == vit_steps, "--cells-from ", path, ": its ViT cells trained --vit-steps ",
           earlier.vit_steps, ", here ", vit_steps);
  NL_CHECK(earlier.screen_step == screen_step, "--cells-from ", path, ": its screen step is ", earlier.screen_step,
           ", here ", screen_step);
  std::map<std::string, std::string> flags;  // "gpt ln" -> its flags there
  for (const auto& [list, model] : {std::pair<const std::vector<RegimeArm>*, const char*>{&earlier.arms, "gpt"},
                                    {&earlier.llama_arms, "gpt"},
                                    {&earlier.vit_arms, "vit"}})
    for (const RegimeArm& a : *list) flags[std::string(model) + " " + a.label] = a.flags;
  std::vector<int> found(plan_cells.size(), -1);
  for (size_t i = 0; i < plan_cells.size(); ++i) {
    const RegimeCell& c = plan_cells[i];
    const std::string text = spec_text(c.arm);
    const std::string key = c.model + " " + c.arm.label;
    if (!flags.count(key) || flags[key] != text.substr(text.find('=') + 1)) continue;
    for (size_t r = 0; r < earlier.runs.size(); ++r) {
      const RegimeRun& run = earlier.runs[r];
      if (run.model == c.model && run.arm == c.arm.label && run.size == c.size && run.width == c.width &&
          run.seed == c.seed && run.llama == c.llama && run.finished()) {
        found[i] = (int)r;
        break;
      }
    }
  }
  return found;
}

}  // namespace

size_t RegimeGrid::kept_count() const {
  return (size_t)std::count_if(kept.begin(), kept.end(), [](const auto& r) { return r.has_value(); });
}

RegimeGrid plan_regime(const RegimeFlags& f) {
  RegimeGrid g;
  g.cells = regime_cells(f.plan);
  g.kept.resize(g.cells.size());
  const std::vector<std::string> files = split_list(f.cells_from);
  NL_CHECK(!f.kept_only || !files.empty(), "--kept-only: name the earlier results with --cells-from");
  for (const std::string& file : files) {
    const RegimeResults earlier = read_regime_results(file, "--cells-from");
    const std::vector<int> found =
        earlier_cells(earlier, file, g.cells, f.recipe, f.compared, f.plan.vit_steps, f.measure_first());
    for (size_t i = 0; i < g.cells.size(); ++i)
      if (!g.kept[i] && found[i] >= 0) g.kept[i] = earlier.runs[found[i]];
  }
  if (f.kept_only)
    for (size_t i = 0; i < g.cells.size(); ++i)
      if (!g.kept[i]) g.not_run.push_back({cell_kind(g.cells[i]), g.cells[i].seed});
  return g;
}

std::string estimate_regime(const RegimeFlags& f, const RegimeGrid& g) {
  std::string text;
  const size_t n_earlier = g.kept_count();
  double total = 0;
  std::map<std::string, std::pair<int, double>> by_kind;
  for (size_t i = 0; i < g.cells.size(); ++i) {
    const RegimeCell& c = g.cells[i];
    if (g.kept[i]) continue;
    const double s = cell_seconds(c, c.model == "vit" ? f.plan.vit_steps : f.plan.steps, f.gpt_step_ms, f.vit_step_ms);
    total += s;
    const std::string key = cell_kind(c);
    by_kind[key].first += 1;
    by_kind[key].second += s;
  }
  const int j = effective_jobs(f.jobs);
  for (const auto& [key, v] : by_kind)
    text += format_text("  %-40s %d seed(s), %.1f min each\n", key.c_str(), v.first, v.second / v.first / 60.0);
  if (!f.llama_note.empty()) text += f.llama_note + "\n";
  if (!f.cells_from.empty())
    text += format_text("%zu of the cells are kept from %s\n", n_earlier, f.cells_from.c_str());
  if (f.kept_only)
    text += format_text("--kept-only: none of the %zu cells above is trained; the report has the kept ones\n",
                        g.cells.size() - n_earlier);
  text += format_text(
      "regime study (--grid %s): %zu cells to train, %.0f CPU minutes at %.1f ms/step (GPT width 128) and %.1f "
      "ms/step "
      "(ViT), about %.0f minutes at %d at a time on an idle machine\n",
      f.grid.c_str(), g.cells.size() - n_earlier, total / 60.0, f.gpt_step_ms, f.vit_step_ms, total / 60.0 / j, j);
  return text;
}

std::vector<GridCell> regime_grid_cells(const RegimeFlags& f, const RegimeGrid& g, std::vector<size_t>& plan_of) {
  std::vector<GridCell> cells;
  plan_of.clear();
  for (size_t i = 0; i < g.cells.size(); ++i) {
    const RegimeCell& c = g.cells[i];
    if (g.kept[i] || f.kept_only) continue;
    plan_of.push_back(i);
    GridCell cell;
    cell.label = c.model + " " + (c.model == "gpt" ? "w" + std::to_string(c.width) + " " : std::string()) +
                 size_label(c.size) + " " + c.arm.label + " s" + std::to_string(c.seed);
    cell.out_dir = f.base.out_dir + "/" + c.folder();
    const std::string seed = std::to_string(c.seed);
    if (c.model == "gpt") {
      cell.program = "train_gpt";
      std::vector<std::string> skip = f.own;
      for (const std::string& a : c.arm.args)
        if (a.rfind("--", 0) == 0) skip.push_back(flag_key(a));
      // what the arm's flags imply (--block llama: SwiGLU, no biases, an untied head)
      // stays implied, unless this command line named it
      for (const std::string& k : implied_keys("train_gpt", c.arm.args))
        if (!f.given(k)) skip.push_back(k);
      cell.args = flags_from_values(f.recipe, skip);
      cell.args.insert(cell.args.end(), c.arm.args.begin(), c.arm.args.end());
      std::string measure = std::to_string(f.measure_first());
      if (f.base.steps != f.measure_first()) measure += "," + std::to_string(f.base.steps);
      for (const std::string& a :
           {std::string("--dim"), std::to_string(c.width), std::string("--seed"), seed, std::string("--train-bytes"),
            std::to_string(c.size), std::string("--measure-at"), measure})
        cell.args.push_back(a);
    } else {
      cell.program = "train_vit";
      cell.args = c.arm.args;
      for (const std::string& a :
           {std::string("--steps"), std::to_string(f.plan.vit_steps), std::string("--eval-every"), std::string("250"),
            std::string("--seed"), seed, std::string("--train-images"), std::to_string(c.size)})
        cell.args.push_back(a);
    }
    cell.cost = cell_seconds(c, c.model == "vit" ? f.plan.vit_steps : f.plan.steps, f.gpt_step_ms, f.vit_step_ms);
    cells.push_back(cell);
  }
  return cells;
}

}  // namespace nl
