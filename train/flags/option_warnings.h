// Settings of a GPT run that do nothing in the model they build, said before it starts
// (train_gpt prints each as "warning: ..." on stderr): a user who sets DyT's alpha0 on a
// LayerNorm model, or a warmup longer than the run, learns it at once instead of from a
// result that never moved.
#pragma once
#include <string>
#include <vector>

#include "train/gpt/gpt_run_config.h"

namespace nl {

// One sentence per unused setting: a norm option (NormConfig::options) that neither the
// blocks' norm kind nor the final norm's declares, set to other than its default; a
// --min-lr other than its default under the flat schedule, which never reads it; a
// --warmup longer than the run, whose lr then never reaches --lr. Read from the registry,
// so a new norm's options are covered without a line here.
std::vector<std::string> gpt_option_warnings(const GPTRunConfig& c);

// The start-of-run line: parameters, norm and block, recipe, steps and batch, output
// folder, threads ("1.23M parameters, norm ln on the pre block, ...").
std::string gpt_run_summary(const GPTRunConfig& c, int64_t parameters);

}  // namespace nl
