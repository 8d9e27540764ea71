// The flags of one GPT training run, composed from the families of
// train/flags/families.h plus the GPT's own (the model's shape and options, the text
// data). train_gpt, screen_dyt and the GPT studies take exactly these; a config made in
// code is checked by the same declarations (check_gpt_run).
#pragma once
#include "train/flags/flag_parser.h"
#include "train/gpt/gpt_run_config.h"
#include "train/gpt/sampling.h"

namespace nl {

// --seq --block --mlp --bias --tied-head --final-norm --emb-scale --dropout, the trunk
// and the norm flags. --block llama implies --mlp swiglu --bias off --tied-head off
// (FlagParser::implies: flags given override them).
void add_gpt_model_flags(FlagParser& p, GPTConfig& model);

// The whole run: --recipe and --list-recipes (train/flags/recipes.h), model, schedule,
// run, and the data: --data --train-bytes --eval-batches. Its checks include the memory
// the run would need.
void add_gpt_run_flags(FlagParser& p, GPTRunConfig& c);

// How text is generated (sample_gpt): --length --temperature --top-k --top-p --seed.
void add_sample_flags(FlagParser& p, SampleSettings& s);

// Runs every check of add_gpt_run_flags over c (throws nl::Error naming the flag), and
// returns config.json's text for it: what train_gpt would record for this run.
std::string check_gpt_run(const GPTRunConfig& c);

}  // namespace nl
