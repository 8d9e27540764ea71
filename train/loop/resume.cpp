#include "train/loop/resume.h"

#include <filesystem>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "tensor/error.h"
#include "train/io/checkpoint.h"
#include "train/io/run_dir.h"

namespace nl {

namespace {

nlohmann::ordered_json parse_config(const std::string& text, const std::string& what) {
  try {
    return nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    fail(what, " is not valid JSON (", e.what(), ")");
  }
}

// A resumed run continues the trajectory of the one that wrote the checkpoint: every
// recipe flag the same, and the same data (its size and checksum, beside --data's
// path, which is a recipe flag).
void check_same_recipe(const std::map<std::string, std::string>& metadata, const TrainConfig& c,
                       const std::string& data, const std::string& ckpt) {
  auto config = metadata.find("config");
  NL_CHECK(config != metadata.end(), "--resume: checkpoint ", ckpt, " records no config (not a normlab checkpoint?)");
  const std::string difference =
      first_recipe_difference(parse_config(config->second, "--resume: the config recorded in " + ckpt),
                              parse_config(c.config_json, "this run's config"), c.recipe_keys,
                              parse_config(c.recipe_defaults, "the recipe's defaults"), "in the checkpoint",
                              "in this run");
  // a finished run is trained further by --extend-to, which keeps the schedule
  const bool steps_differ = difference.rfind("--steps ", 0) == 0;
  NL_CHECK(difference.empty(), "--resume: checkpoint ", ckpt, " was trained with another recipe: ", difference,
           steps_differ ? " (to train a run further, keep its --steps and give --extend-to N: the steps past "
                          "--steps keep the lr of its last step)"
                        : " (a resumed run keeps every recipe flag: docs/reliability.md lists them; start a new run "
                          "in another --out, or replace this one with --overwrite)");
  if (data.empty()) return;
  auto saved = metadata.find("data");
  NL_CHECK(saved != metadata.end() && saved->second == data, "--resume: checkpoint ", ckpt,
           " was trained on other data: ", saved == metadata.end() ? std::string("none recorded") : saved->second,
           " in the checkpoint, ", data, " in this run's --data");
}

}  // namespace

int64_t resume(TrainTask& task, const TrainConfig& c, FlatParameters& flat, AdamW& optim) {
  if (!c.resume) return 0;
  const std::string ckpt = c.out_dir + "/checkpoint.safetensors";
  NL_CHECK(std::filesystem::exists(ckpt), "--resume: no checkpoint at ", ckpt);
  Generator saved;
  const CheckpointInfo info = load_checkpoint(ckpt, flat, optim, saved, task.model_description(),
                                              [&](const std::map<std::string, std::string>& m) {
                                                check_same_recipe(m, c, task.data_fingerprint(), ckpt);
                                              });
  NL_CHECK(info.step <= c.run_steps(), "--resume: checkpoint is at step ", info.step, ", past the run's end at ",
           c.extend_to > 0 ? "--extend-to " : "--steps ", c.run_steps(), " (--extend-to N with N >= ", info.step,
           " trains it further)");
  task.resume_batches(info.step, c.batch, saved);
  task.restore_extra_state(info.metadata);
  return info.step;
}

}  // namespace nl
