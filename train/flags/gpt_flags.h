// The command-line flags of one GPT training run, declared and read in one place so
// that every program that trains "the run" (train_gpt, screen_dyt) accepts the same
// recipe and budget: --norm, --layers, ..., --out (see `train_gpt --help`).
#pragma once
#include "train/flags/args.h"
#include "train/gpt/gpt_run.h"

namespace nl {

// Declares every flag of GPTRunConfig with its default.
void add_gpt_run_flags(Args& args);

// The run's configuration from parsed flags. --emb-scale takes a number, `sqrt`
// (sqrt(--dim), DyT's LLaMA recipe) or `none`.
GPTRunConfig gpt_run_config_from(const Args& args);

}  // namespace nl
