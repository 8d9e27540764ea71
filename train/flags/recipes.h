// Named recipes: documented bundles of flags that train a norm as its paper (or its
// released code) did, or as the demo does. `--recipe NAME` puts the recipe's flags
// before the command line (FlagParser::implies), so flags given still override them,
// wherever they stand; config.json records the recipe's name and every expanded flag.
// `--list-recipes` prints them with their flags and sources, and the registered norms.
// Every GPT program takes both through add_gpt_run_flags (train/flags/gpt_flags.h).
#pragma once
#include <string>
#include <vector>

#include "train/flags/flag_parser.h"

namespace nl {

struct Recipe {
  std::string name;                // what --recipe takes
  std::string summary;             // one line
  std::vector<std::string> flags;  // {"--norm", "bhyt", "--block", "llama", ...}
  std::string source;              // where each setting comes from, and what differs
};

// Every recipe, in the order --list-recipes prints them.
const std::vector<Recipe>& recipes();
// The recipe called `name`; throws "--recipe: unknown recipe 'x' (choose one of: ...)".
const Recipe& recipe(const std::string& name);
// What --list-recipes prints.
std::string recipes_listing();

// --recipe NAME (a Recipe flag: config.json records it) and --list-recipes.
void add_recipe_flags(FlagParser& p, std::string& recipe_name);

}  // namespace nl
