// What run_gpt and run_vit do with their flags before a run starts (prepare_run), apart
// from the families (train/flags/families.h), which most files include: these templates
// need nlohmann-json's full header, which a file that only declares flags need not parse.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>  // recipe_keys_of reads FlagParser::values()

#include "train/flags/flag_parser.h"
#include "train/io/run_dir.h"  // check_fresh_folder

namespace nl {

// The keys of the Recipe flags (FlagParser::recipe_keys) that `add` declares, what a
// resumed run of a config made in code must not change; and in `defaults` their values
// for a default Config (FlagParser::values, as JSON), what a run recorded by an older
// version without one of the flags had.
template <class Config>
std::vector<std::string> recipe_keys_of(void (*add)(FlagParser&, Config&), std::string& defaults) {
  FlagParser p("", "");
  Config c;
  add(p, c);
  defaults = p.values().dump();
  return p.recipe_keys();
}

// What run_gpt and run_vit do before the data is read and the model built: run every
// check of the config's flags (`check`: check_gpt_run, check_vit_run), keep the
// config.json it returns unless the program recorded its own, note which keys are the
// recipe a resume must not change, and refuse an --out that holds another run.
template <class Config>
void prepare_run(Config& c, std::string (*check)(const Config&), void (*add)(FlagParser&, Config&)) {
  const std::string recorded = check(c);
  if (c.config_json.empty()) c.config_json = recorded;
  c.recipe_keys = recipe_keys_of(add, c.recipe_defaults);
  check_fresh_folder(c.out_dir, "--out", c.resume, c.overwrite);
}

}  // namespace nl
