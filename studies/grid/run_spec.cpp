#include "studies/grid/run_spec.h"

#include <cctype>
#include <set>
#include <sstream>

#include "nn/norms/registry.h"
#include "tensor/error.h"
#include "train/flags/recipes.h"

namespace nl {

void check_run_label(const std::string& label, const std::string& text) {
  // a label names the run's folder beside the study's own files, a row of summary.csv
  // and of the report's tables: letters, digits and ._+- only (a newline broke the CSV,
  // '|' the table; "-x" and "--help" read as flags), a letter or digit first
  const std::string allowed = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-";
  NL_CHECK(!label.empty() && label.size() <= kMaxLabelLength && label.find_first_not_of(allowed) == std::string::npos &&
               std::isalnum((unsigned char)label[0]),
           "run '", text, "': the label before '=' must be a plain name of at most ", kMaxLabelLength,
           " letters, digits and ._+-, starting with a letter or digit (it names the run's folder)");
  // the study's own files stand beside the runs' folders (results.json, report.md, summary.csv, ...)
  for (const char* ext : {".json", ".md", ".csv", ".png", ".txt", ".tmp"}) {
    const std::string e = ext;
    NL_CHECK(label.size() <= e.size() || label.compare(label.size() - e.size(), e.size(), e) != 0, "run '", text,
             "': the label ends in ", e, ", like the files a study writes beside its runs' folders");
  }
}

RunSpec parse_run_spec(const std::string& text) {
  RunSpec spec;
  const size_t eq = text.find('=');
  spec.label = text.substr(0, eq);
  check_run_label(spec.label, text);
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
  while (ss >> word) {
    // the grid sets these for every run (studies/grid/grid.cpp: full_args); before, a
    // run's own was overridden without a word
    const std::string flag = word.substr(0, word.find('='));
    for (const char* own : {"--out", "--threads", "--quiet", "--resume", "--overwrite", "--stop-after"})
      NL_CHECK(flag != own, "run '", text, "': ", own, " is the study's to set for every run, not a run's");
    spec.args.push_back(word);
  }
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
