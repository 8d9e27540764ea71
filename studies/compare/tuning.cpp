#include "studies/compare/tuning.h"

#include <cmath>
#include <set>

#include "tensor/error.h"
#include "train/flags/flag_parser.h"

namespace nl {

namespace {

// names and values name folders ("lr_3e-4+warmup_50"): no '_' (it joins name and value),
// no ',', ';', '=', '/' or spaces
// what the axis alpha0 sets: every DyT site's initial alpha, a recipe's per-site ones too
const std::vector<std::string> kAlpha0Flags = {"--dyt-alpha0", "--dyt-alpha0-attn", "--dyt-alpha0-mlp",
                                               "--dyt-alpha0-final"};

bool plain_word(const std::string& s) {
  const std::string allowed = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.+-";
  return !s.empty() && s.find_first_not_of(allowed) == std::string::npos;
}

}  // namespace

std::vector<TuneAxis> parse_tune_axes(const std::string& text, const std::string& flag) {
  std::vector<TuneAxis> axes;
  std::set<std::string> names;
  for (const std::string& part : split_list(text, ';')) {
    const size_t eq = part.find('=');
    NL_CHECK(eq != std::string::npos, flag, ": '", part,
             "' is not NAME=V1,V2,... (a train_gpt flag without its dashes)");
    TuneAxis axis{part.substr(0, eq), split_list(part.substr(eq + 1))};
    NL_CHECK(plain_word(axis.name) && axis.name[0] != '-', flag, ": '", axis.name,
             "' is not a flag name (letters, digits and -, without the leading dashes)");
    // the study sets these for every cell: the grid's own, and the training text the
    // tuning split is held out of
    for (const char* own : {"out", "threads", "quiet", "resume", "overwrite", "stop-after", "train-bytes", "config"})
      NL_CHECK(axis.name != own, flag, ": --", own, " is the study's to set, not an axis");
    NL_CHECK(!axis.values.empty(), flag, ": the axis ", axis.name, " has no values");
    for (const std::string& v : axis.values)
      NL_CHECK(plain_word(v), flag, ": the value '", v, "' of ", axis.name,
               " is not letters, digits and .+- (it names the setting's folder)");
    NL_CHECK(std::set<std::string>(axis.values.begin(), axis.values.end()).size() == axis.values.size(), flag,
             ": the axis ", axis.name, " names a value twice");
    NL_CHECK(names.insert(axis.name).second, flag, ": the axis ", axis.name, " is given twice");
    axes.push_back(axis);
  }
  NL_CHECK(!axes.empty(), flag, ": no axis (give NAME=V1,V2;NAME=..., e.g. 'lr=3e-4,1e-3;warmup=50,500')");
  return axes;
}

size_t tune_setting_count(const std::vector<TuneAxis>& axes) {
  size_t n = 1;
  for (const TuneAxis& a : axes) n *= a.values.size();
  return n;
}

std::vector<TuneSetting> tune_settings(const std::vector<TuneAxis>& axes) {
  std::vector<TuneSetting> out = {TuneSetting{}};
  for (const TuneAxis& axis : axes) {
    std::vector<TuneSetting> grown;
    for (const TuneSetting& s : out)
      for (const std::string& v : axis.values) {
        TuneSetting t = s;
        t.label += (t.label.empty() ? "" : "+") + axis.name + "_" + v;
        const std::vector<std::string> flags =
            axis.name == "alpha0" ? kAlpha0Flags : std::vector<std::string>{"--" + axis.name};
        for (const std::string& f : flags) t.args.insert(t.args.end(), {f, v});
        grown.push_back(t);
      }
    out = grown;
  }
  return out;
}

int select_tuned(const std::vector<TuneTrial>& trials) {
  int best = -1;
  for (size_t i = 0; i < trials.size(); ++i) {
    const TuneTrial& t = trials[i];
    if (!t.finished || !std::isfinite(t.tuning_loss)) continue;
    if (best < 0 || t.tuning_loss < trials[(size_t)best].tuning_loss) best = (int)i;
  }
  return best;
}

}  // namespace nl
