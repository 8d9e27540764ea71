// A run of a study as the command line names it: "label=FLAGS" (FLAGS split at spaces,
// e.g. "pre+bhyt=--block pre --norm bhyt"), or a bare name: a registered norm (label
// NAME, flags --norm NAME: the norm on the defaults, which are the plain recipe), or
// else a recipe (train_gpt --list-recipes: label NAME, flags --recipe NAME). The label
// names the run's folder and its rows in the report.
#pragma once
#include <string>
#include <vector>

namespace nl {

struct RunSpec {
  std::string label;
  std::vector<std::string> args;
};

// Throws naming the spec when the label is empty or not a plain folder name, or a bare
// name is neither a norm nor a recipe. The flags themselves are the training program's
// to check (the grid does, before any run: studies/grid/grid.h).
RunSpec parse_run_spec(const std::string& text);

// Throws, naming the spec `text`, unless `label` is a safe folder name: at most
// kMaxLabelLength letters, digits and ._+-, a letter or digit first, not ending like a
// study's own file (.json, .md, .csv, .png, .txt, .tmp).
constexpr size_t kMaxLabelLength = 64;
void check_run_label(const std::string& label, const std::string& text);
// Also throws when two specs have one label.
std::vector<RunSpec> parse_run_specs(const std::vector<std::string>& texts);

// "label=--a 1 --b": the spec as parse_run_spec reads it back.
std::string spec_text(const RunSpec& spec);

}  // namespace nl
