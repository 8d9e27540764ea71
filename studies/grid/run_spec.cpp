#include "studies/grid/run_spec.h"

#include <set>
#include <sstream>

#include "nn/norms/registry.h"
#include "tensor/error.h"
#include "train/flags/recipes.h"

namespace nl {

RunSpec parse_run_spec(const std::string& text) {
  RunSpec spec;
  const size_t eq = text.find('=');
  spec.label = text.substr(0, eq);
  NL_CHECK(!spec.label.empty() && spec.label.find_first_of("/ \t") == std::string::npos && spec.label != "." &&
               spec.label != "..",
           "run '", text, "': the label before '=' must be a plain name (it names the run's folder)");
  if (eq == std::string::npos) {
    for (const NormKind& k : norm_kinds())
      if (k.name == spec.label) {
        spec.args = {"--norm", spec.label};
        return spec;
      }
    std::string recipe_names;
    for (const Recipe& r : recipes()) {
      if (r.name == spec.label) {
        spec.args = {"--recipe", spec.label};
        return spec;
      }
      recipe_names += (recipe_names.empty() ? "" : ", ") + r.name;
    }
    fail("run '", text, "': a bare name must be a norm (", norm_choices(", "), ") or a recipe (", recipe_names,
         "); give other runs as LABEL=FLAGS");
  }
  std::stringstream ss(text.substr(eq + 1));
  std::string word;
  while (ss >> word) spec.args.push_back(word);
  return spec;
}

std::vector<RunSpec> parse_run_specs(const std::vector<std::string>& texts) {
  std::vector<RunSpec> out;
  std::set<std::string> labels;
  for (const auto& t : texts) {
    out.push_back(parse_run_spec(t));
    NL_CHECK(labels.insert(out.back().label).second, "run label '", out.back().label, "' is given twice");
  }
  return out;
}

std::string spec_text(const RunSpec& spec) {
  std::string s = spec.label + "=";
  for (size_t i = 0; i < spec.args.size(); ++i) s += (i ? " " : "") + spec.args[i];
  return s;
}

}  // namespace nl
